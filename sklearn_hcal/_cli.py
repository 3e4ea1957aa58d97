def main(argv=None):
    raise SystemExit("hcal: not implemented yet")
