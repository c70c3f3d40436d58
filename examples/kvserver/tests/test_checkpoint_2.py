"""Checkpoint 2: DELETE and listing keys."""

import json

import pytest


def test_delete_key(server):
    server.put("/kv/temp", b"1")
    assert server.delete("/kv/temp")[0] == 204
    assert server.get("/kv/temp")[0] == 404


def test_list_keys_sorted(server):
    for key in ("pear", "apple", "Zebra", "mango"):
        server.put(f"/kv/{key}", b"fruit")
    server.delete("/kv/mango")
    status, headers, body = server.get("/kv")
    assert status == 200
    assert headers.get_content_type() == "application/json"
    assert json.loads(body) == {"keys": ["Zebra", "apple", "pear"]}


def test_list_empty_store(server):
    status, _, body = server.get("/kv")
    assert (status, json.loads(body)) == (200, {"keys": []})


@pytest.mark.functionality
def test_put_after_delete_is_new(server):
    server.put("/kv/again", b"1")
    server.delete("/kv/again")
    assert server.put("/kv/again", b"2")[0] == 201


@pytest.mark.error
def test_delete_unknown_key(server):
    assert server.delete("/kv/never-stored")[0] == 404
