print("keychaind")
