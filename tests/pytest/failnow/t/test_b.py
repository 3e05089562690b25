def test_other_shard():
    pass
