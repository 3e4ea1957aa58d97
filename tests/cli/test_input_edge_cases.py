"""hcal evaluate's input files: an unnamed CSV index, logits as probabilities."""

import numpy as np
import pandas as pd
import pytest


def test_cli_csv_with_an_unnamed_index_column_raises(tmp_path, monkeypatch, capsys):
    # DataFrame.to_csv writes the index as a first column with an empty header
    # cell; pandas reads it as a class named "Unnamed: 0" holding 0, 1, 2, ...
    # With --renormalize the two files below then scored JSD 0.20 where the
    # probabilities give 0.42 (scipy), the index counted as a fourth class.
    from scipy.spatial.distance import jensenshannon

    from sklearn_hcal.cli import main

    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(3), size=20)
    C = np.array([rng.multinomial(5, p) for p in rng.dirichlet(np.ones(3), 20)])
    pd.DataFrame(C, columns=list("abc")).to_csv(tmp_path / "Y.csv")
    pd.DataFrame(P, columns=list("abc")).to_csv(tmp_path / "P.csv")
    monkeypatch.chdir(tmp_path)
    argv = ["evaluate", "Y.csv", "--pred", "P.csv", "--metrics", "jsd"]
    assert main([*argv, "--renormalize"]) == 2
    err = capsys.readouterr().err
    assert "Y.csv" in err and "no name" in err and "index=False" in err
    # Written without the index, the same data score as scipy says.
    pd.DataFrame(C, columns=list("abc")).to_csv(tmp_path / "Y.csv", index=False)
    pd.DataFrame(P, columns=list("abc")).to_csv(tmp_path / "P.csv", index=False)
    assert main([*argv, "--format", "csv"]) == 0
    value = float(capsys.readouterr().out.splitlines()[1].split(",")[1])
    expected = np.mean([jensenshannon(c / c.sum(), p) for c, p in zip(C, P)])
    assert value == pytest.approx(expected, rel=1e-9)


def test_cli_logits_on_a_probability_file_warns(tmp_path, monkeypatch, capsys):
    # --logits applies to every --pred: scoring a probability file beside a
    # logit file softmaxed the probabilities without a word (JSD 0.39 for a
    # file whose probabilities give 0.42).
    from sklearn_hcal.cli import main

    rng = np.random.default_rng(5)
    L = rng.normal(size=(20, 3))
    P = np.exp(L) / np.exp(L).sum(axis=1, keepdims=True)
    C = np.array([rng.multinomial(5, p) for p in rng.dirichlet(np.ones(3), 20)])
    np.save(tmp_path / "Y.npy", C)
    np.save(tmp_path / "P.npy", P)
    np.save(tmp_path / "L.npy", L)
    monkeypatch.chdir(tmp_path)
    argv = ["evaluate", "Y.npy", "--logits", "--metrics", "jsd"]
    assert main([*argv, "--pred", "L.npy"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main([*argv, "--pred", "P.npy", "--pred", "L.npy"]) == 0
    err = capsys.readouterr().err
    assert "P.npy" in err and "every row holds probabilities" in err
    assert "L.npy" not in err
