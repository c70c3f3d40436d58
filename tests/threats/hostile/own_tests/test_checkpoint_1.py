def test_everything_passes():
    assert True
