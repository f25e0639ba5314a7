"""Configuration: every config key kcoord knows, defined once (``config_key``: the
ConfigKey type; ``broker_keys``: every broker-level key, with its reader and whether it is
dynamic; ``security_keys``: its listener, SASL, TLS and authorizer
rows; ``definitions``: the keys by resource, topic, broker and group), and dynamic
configuration (Kafka's ConfigAdminManager, ConfigurationControlManager, LogConfig,
GroupConfig and DynamicBrokerConfig): their validation, the dynamic configs' state and the
records that change it. Sans-I/O."""
