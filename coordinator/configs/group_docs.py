"""Kafka's documentation of the group coordinator's broker keys (``group.*``, ``offsets.*``,
``offset.metadata.max.bytes``), as DescribeConfigs v3+ returns it with
``include_documentation``: ``GroupCoordinatorConfig``'s and ``ShareGroupConfig``'s ``*_DOC``
constants, verbatim. A group resource's key (``GroupConfig``) is documented as the broker key
it follows (``consumer.session.timeout.ms``: ``group.consumer.session.timeout.ms``), except
``share.auto.offset.reset``, which has its own."""

from __future__ import annotations

__all__ = ["GROUP_COORDINATOR_DOCS", "SHARE_AUTO_OFFSET_RESET_DOC"]

#: ``GroupConfig.SHARE_AUTO_OFFSET_RESET_DOC``.
SHARE_AUTO_OFFSET_RESET_DOC = "The strategy to initialize the share-partition start offset."

#: Broker key -> its documentation (``GroupCoordinatorConfig``, ``ShareGroupConfig``).
GROUP_COORDINATOR_DOCS: dict[str, str] = {
    "group.consumer.assignors": (
        "The server side assignors as a list of full class names. The first one in the list is "
        "considered as the default assignor to be used in the case where the consumer does not "
        "specify an assignor."),
    "group.consumer.heartbeat.interval.ms": (
        "The heartbeat interval given to the members of a consumer group."),
    "group.consumer.max.heartbeat.interval.ms": (
        "The maximum heartbeat interval for registered consumers."),
    "group.consumer.max.session.timeout.ms": (
        "The maximum allowed session timeout for registered consumers."),
    "group.consumer.max.size": (
        "The maximum number of consumers that a single consumer group can accommodate. This "
        "value will only impact the new consumer coordinator. To configure the classic consumer "
        "coordinator check group.max.size instead."),
    "group.consumer.migration.policy": (
        "The config that enables converting the non-empty classic group using the consumer "
        "embedded protocol to the non-empty consumer group using the consumer group protocol "
        "and vice versa; conversions of empty groups in both directions are always enabled "
        "regardless of this policy. bidirectional: both upgrade from classic group to consumer "
        "group and downgrade from consumer group to classic group are enabled, upgrade: only "
        "upgrade from classic group to consumer group is enabled, downgrade: only downgrade "
        "from consumer group to classic group is enabled, disabled: neither upgrade nor "
        "downgrade is enabled."),
    "group.consumer.min.heartbeat.interval.ms": (
        "The minimum heartbeat interval for registered consumers."),
    "group.consumer.min.session.timeout.ms": (
        "The minimum allowed session timeout for registered consumers."),
    "group.consumer.regex.refresh.interval.ms": (
        "The interval at which the group coordinator will refresh the topics matching the group "
        "subscribed regexes. This is only applicable to consumer groups using the consumer "
        "group protocol. "),
    "group.consumer.session.timeout.ms": (
        "The timeout to detect client failures when using the consumer group protocol."),
    "group.initial.rebalance.delay.ms": (
        "The amount of time the group coordinator will wait for more consumers to join a new "
        "group before performing the first rebalance. A longer delay means potentially fewer "
        "rebalances, but increases the time until processing begins."),
    "group.max.session.timeout.ms": (
        "The maximum allowed session timeout for registered consumers. Longer timeouts give "
        "consumers more time to process messages in between heartbeats at the cost of a longer "
        "time to detect failures."),
    "group.max.size": (
        "The maximum number of consumers that a single consumer group can accommodate."),
    "group.min.session.timeout.ms": (
        "The minimum allowed session timeout for registered consumers. Shorter timeouts result "
        "in quicker failure detection at the cost of more frequent consumer heartbeating, which "
        "can overwhelm broker resources."),
    "group.share.delivery.count.limit": (
        "The maximum number of delivery attempts for a record delivered to a share group."),
    "group.share.heartbeat.interval.ms": (
        "The heartbeat interval given to the members of a share group."),
    "group.share.max.heartbeat.interval.ms": (
        "The maximum heartbeat interval for share group members."),
    "group.share.max.session.timeout.ms": (
        "The maximum allowed session timeout for share group members."),
    "group.share.max.share.sessions": "The maximum number of share sessions per broker.",
    "group.share.max.size": (
        "The maximum number of members that a single share group can accommodate."),
    "group.share.min.heartbeat.interval.ms": (
        "The minimum heartbeat interval for share group members."),
    "group.share.min.session.timeout.ms": (
        "The minimum allowed session timeout for share group members."),
    "group.share.partition.max.record.locks": "Share-group record lock limit per share-partition.",
    "group.share.record.lock.duration.ms": (
        "The record acquisition lock duration in milliseconds for share groups."),
    "group.share.session.timeout.ms": (
        "The timeout to detect client failures when using the share group protocol."),
    "offset.metadata.max.bytes": (
        "The maximum size for a metadata entry associated with an offset commit."),
    "offsets.retention.check.interval.ms": "Frequency at which to check for stale offsets",
    "offsets.retention.minutes": (
        "For subscribed consumers, committed offset of a specific partition will be expired and "
        "discarded when 1) this retention period has elapsed after the consumer group loses all "
        "its consumers (i.e. becomes empty); 2) this retention period has elapsed since the "
        "last time an offset is committed for the partition and the group is no longer "
        "subscribed to the corresponding topic. For standalone consumers (using manual "
        "assignment), offsets will be expired after this retention period has elapsed since the "
        "time of last commit. Note that when a group is deleted via the delete-group request, "
        "its committed offsets will also be deleted without extra retention period; also when a "
        "topic is deleted via the delete-topic request, upon propagated metadata update any "
        "group's committed offsets for that topic will also be deleted without extra retention "
        "period."),
}
