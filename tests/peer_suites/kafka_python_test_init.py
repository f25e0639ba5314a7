"""kcoord's ``test/__init__.py`` for kafka-python's sdist tests (the sdist does not ship one).

``run_kafka_python_admin.sh`` copies this file to ``test/__init__.py``: it makes ``test`` a
package (so ``from test.testutil import ...`` finds the suite, not Python's own ``test``
package) and sets what kafka-python's test package sets for every run: log at INFO, and a
``Future`` callback that raises fails the test instead of being logged and swallowed.
"""

import logging

from kafka.future import Future

logging.basicConfig(level=logging.INFO)
Future.error_on_callbacks = True
