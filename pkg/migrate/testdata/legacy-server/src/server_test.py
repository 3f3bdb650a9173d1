def test_ping(client):
    assert client.request("ping") == {}
    assert resp["error"]["code"] == -32001
