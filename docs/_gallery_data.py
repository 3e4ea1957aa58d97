"""The data the gallery reads, found before Sphinx starts (``make docs``).

Three examples read ChaosNLI-SNLI through ``fetch_chaosnli``, from the data
home (``HCAL_DATA``, else ``~/hcal_data``), downloading it there once. When
``HCAL_DATA`` is unset and the checkout has the shared read-only copy beside
it (``../shared/data``, or ``HCAL_SHARED_DATA``), the build points
``HCAL_DATA`` there. Run as a script, it prints one line naming
``HCAL_DATA`` and exits with status 1 when the data is neither there nor
downloadable -- instead of Sphinx's "Extension error" after every example
has failed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The ChaosNLI subsets the gallery reads.
SUBSETS = ("snli",)


def point_at_shared_copy() -> None:
    """Set ``HCAL_DATA`` to the shared copy beside the checkout, if unset."""
    shared = Path(os.environ.get("HCAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    if "HCAL_DATA" not in os.environ and (shared / "chaosnli_v1.0").is_dir():
        os.environ["HCAL_DATA"] = str(shared)


def missing_data() -> str | None:
    """None when the gallery's data is in the data home (or was downloaded
    there now); otherwise the one line that says how to provide it."""
    sys.path.insert(0, str(ROOT))
    from sklearn_hcal.datasets import fetch_chaosnli, get_data_home

    for subset in SUBSETS:
        try:
            fetch_chaosnli(subset)
        except OSError as exc:
            where = (
                f"HCAL_DATA={os.environ['HCAL_DATA']}"
                if "HCAL_DATA" in os.environ
                else f"{get_data_home()} (HCAL_DATA is not set)"
            )
            reason = str(exc).split(". ")[0]
            return (
                f"docs: the gallery needs ChaosNLI-{subset.upper()} under the data "
                f"home {where}, and it could not be downloaded ({reason}); set "
                "HCAL_DATA to a folder holding chaosnli_v1.0/ and run make docs again"
            )
    return None


if __name__ == "__main__":
    point_at_shared_copy()
    message = missing_data()
    if message is not None:
        sys.stderr.write(message + "\n")
        raise SystemExit(1)
