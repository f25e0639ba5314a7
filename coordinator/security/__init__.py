"""Security, sans-I/O: SASL mechanism servers (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER), SCRAM
credentials, Kafka's StandardAuthorizer with its ACL store, and TLS client principals.

Like the coordinator core, nothing here touches trio, time, randomness, files or sockets:
``now_ms`` and a ``random_bytes`` function are arguments (a test walks the imports).
"""
