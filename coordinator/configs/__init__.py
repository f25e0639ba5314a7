"""Dynamic configuration (Kafka's ConfigAdminManager, ConfigurationControlManager, LogConfig,
GroupConfig and DynamicBrokerConfig): the config keys Kafka defines, their validation, the
dynamic configs' state and the records that change it. Sans-I/O."""
