"""In a sub-folder: SCBench takes `extra` for its checkpoint (a Regression), and its inventory
takes only the tests whose names a checkpoint's `-k` matches."""


def test_plain(echo):
    assert echo("p").stdout == "p\n"


def test_Checkpoint_10_in_capitals(echo):
    """`-k` is case-insensitive: `checkpoint_1` and `checkpoint_10` both match this name."""
    assert echo("c").stdout == "c\n"
