"""Share groups (KIP-932) on the group coordinator's side: the group and its members
(``group``), ShareGroupHeartbeat (``heartbeat``) with the simple assignor's target
assignment, and ShareGroupDescribe (``describe``). Sources followed, in apache/kafka
``group-coordinator/``: ``modern/share/ShareGroup``, ``ShareGroupMember``,
``ShareGroupAssignmentBuilder`` and ``GroupMetadataManager``'s share paths."""
