raise SystemExit("the submission's pytest.py was imported")
