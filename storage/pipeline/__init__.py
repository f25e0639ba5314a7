"""kcoord's data pipeline on Spark: data directories -> offset and rebalance datasets.

- ``parse``: segment files -> columns, in plain Python (the storage codec); no Spark.
- ``source``: the ``kcoord-log`` PySpark Python Data Source (one input partition per
  segment file, Arrow record batches).
- ``jobs``: ``offsets_latest``, ``offset_commits`` / ``commit_rates``, ``rebalances``,
  ``groups_summary`` (DataFrame API).
- ``topic_ends`` / ``lag``: the topics' log ends (read on the driver) and ``offsets_lag``,
  the lag over time.
- ``driver_read``: small inputs parsed on the driver (no Python workers to start).
- ``report``: Parquet outputs, plots, ``report.md`` / ``report.html``.
- ``cli``: ``kcoord pipeline --input DIR [DIR ...] --output DIR``.
- ``session``: a SparkSession pinned to loopback; ``quiet_jvm``: its JVM without the
  start-up banner (``--quiet``).
- ``uris``, ``hadoop_fs``, ``remote_source``: inputs and outputs given as URIs (``hdfs://``,
  ``s3a://``, ``file://``, ...), listed, read (``binaryFile``) and written through Spark's
  Hadoop filesystems.

Segments are found and read through storage itself (``storage.directory.find_segments``,
``storage.segment.scan_entries``, ``storage.record_codec``). Everything but ``parse`` needs
the ``pipeline`` extra (``pip install 'kcoord[pipeline]'``: pyspark[sql], pandas < 3,
matplotlib) and Java 17.
"""
