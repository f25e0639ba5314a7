# kcoord's end-to-end suite in a container, pointed at a broker by bootstrap address:
#
#   docker compose -f compose/compose.yaml --profile differential run --rm conformance \
#       --bootstrap kafka:9092        (or --bootstrap kcoord:9092)
#
# The `conformance` service of compose/compose.yaml builds this (context: the repository
# root). ENTRYPOINT is the suite; CMD holds the default arguments.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# kcat: the librdkafka client the e2e suite drives besides kafka-python. Debian's package
# version follows the base image's point releases, so it is not pinned (DL3008).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends kcat \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 kcoord \
    && useradd --system --no-log-init --create-home --uid 10001 --gid kcoord kcoord

WORKDIR /usr/src/kcoord
COPY pyproject.toml README.md LICENSE ./
COPY wire/ ./wire/
COPY coordinator/ ./coordinator/
COPY storage/ ./storage/
# ".[test]" is this repository (hadolint takes it for an unpinned PyPI name: DL3013); the
# test extra's own pins in pyproject.toml apply.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[test]" \
    && rm -rf build ./*.egg-info
COPY tests/ ./tests/

USER 10001:10001
ENTRYPOINT ["python", "-m", "pytest", "-p", "no:cacheprovider", "tests/e2e"]
CMD ["--bootstrap", "kafka:9092"]
