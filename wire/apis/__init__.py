"""One module per Kafka API, each registering its ``ApiSpec`` when imported.

Importing this package imports none of them: ``wire.registry.lookup`` imports an API's
module on first use (``wire.registry.VERSION_TABLE`` names them), ``all_apis`` every one.
"""
