"""Checkpoint 1: PUT and GET of keys."""

import pytest


def test_put_then_get(server):
    status, _, _ = server.put("/kv/greeting", b"hello")
    assert status == 201
    status, headers, body = server.get("/kv/greeting")
    assert (status, body) == (200, b"hello")
    assert headers.get_content_type() == "application/octet-stream"


def test_get_unknown_key(server):
    status, _, _ = server.get("/kv/nothing-here")
    assert status == 404


def test_put_twice_replaces(server):
    assert server.put("/kv/colour", b"red")[0] == 201
    assert server.put("/kv/colour", b"blue")[0] == 200
    assert server.get("/kv/colour")[2] == b"blue"


@pytest.mark.functionality
def test_binary_value_roundtrip(server):
    value = bytes(range(256)) * 4
    assert server.put("/kv/blob_1.bin", value)[0] == 201
    assert server.get("/kv/blob_1.bin")[2] == value


@pytest.mark.error
@pytest.mark.parametrize("path", ["/kv/bad%20key", "/kv/" + "k" * 101], ids=["space", "too-long"])
def test_invalid_key(server, path):
    assert server.put(path, b"x")[0] == 400
    assert server.get(path)[0] == 400


@pytest.mark.error
def test_unknown_path(server):
    assert server.get("/nope")[0] == 404
