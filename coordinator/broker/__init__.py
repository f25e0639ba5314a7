"""The broker's topic store: topics, their partition logs and record batches, topic files
and the broker's config (``config.BROKER_CONFIG_DEFAULTS``).

The APIs that read and write it are the server's route modules
(``coordinator/server/apis/``); they reach the store through ``ctx.state.topics``, a
``topics.TopicStore``. Nothing here imports ``coordinator.server``, and nothing is imported
here: a module of the package costs only itself (the server validates the broker's config
keys before it binds, and imports the topic store only to load it).
"""
