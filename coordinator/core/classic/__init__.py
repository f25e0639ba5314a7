"""The classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup): Kafka's
ClassicGroup and its members, the five group states, and the size bound of a group's record.

One module per API (``join``, ``sync``, ``heartbeat``, ``leave``) over the group model
(``group``, ``group_member``, ``state``, ``group_size``). The consumer group protocol
(KIP-848) lives beside it in ``coordinator.core.consumer``.
"""
