"""Runtime tests (``gpu``-marked ones are skipped by the root conftest without a GPU); the
``fake_driver`` fixture that runs the launch path on the CPU lives in tests/conftest.py."""
