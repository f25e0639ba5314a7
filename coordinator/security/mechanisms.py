"""The SASL mechanisms a listener offers, over the users the server knows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from coordinator.security.oauthbearer import (
    OAUTHBEARER,
    OAuthBearerServer,
    UnsecuredValidatorOptions,
)
from coordinator.security.plain import PLAIN, PlainServer, PlainUsers
from coordinator.security.sasl import ALL_MECHANISMS, RandomBytes, SaslAuthenticator, SaslServer
from coordinator.security.scram import ScramServer, server_nonce
from coordinator.security.scram_credentials import ScramCredentialStore, mechanism_by_name
from wire.constants import ScramMechanism

__all__ = ["SaslMechanisms", "parse_enabled_mechanisms"]


def parse_enabled_mechanisms(value: str | None) -> tuple[str, ...]:
    """``sasl.enabled.mechanisms``: a comma-separated list; unset means all four. Raises
    ValueError naming a mechanism kcoord does not have."""
    if value is None:
        return ALL_MECHANISMS
    names = tuple(dict.fromkeys(n.strip() for n in value.split(",") if n.strip()))
    unknown = [n for n in names if n not in ALL_MECHANISMS]
    if unknown:
        raise ValueError(
            f"Unsupported SASL mechanism {unknown[0]}; kcoord supports {', '.join(ALL_MECHANISMS)}"
        )
    return names


@dataclass(slots=True)
class SaslMechanisms:
    """One listener's SASL: its enabled mechanisms and where their credentials live."""

    enabled: Sequence[str]
    plain_users: PlainUsers
    scram_credentials: ScramCredentialStore
    random_bytes: RandomBytes
    oauth_options: UnsecuredValidatorOptions = field(default_factory=UnsecuredValidatorOptions)
    max_reauth_ms: int | None = None
    #: A mechanism's own ``connections.max.reauth.ms`` (KIP-368), over ``max_reauth_ms``.
    max_reauth_ms_by_mechanism: Mapping[str, int] = field(default_factory=dict)

    def server(self, mechanism: str) -> SaslServer:
        """A fresh server for one exchange of an enabled mechanism."""
        if mechanism == PLAIN:
            return PlainServer(self.plain_users)
        if mechanism == OAUTHBEARER:
            return OAuthBearerServer(self.oauth_options)
        scram = mechanism_by_name(mechanism)
        if scram is ScramMechanism.UNKNOWN:
            raise ValueError(f"no SASL mechanism {mechanism}")
        return ScramServer(scram, self.scram_credentials, self._scram_nonce)

    def _scram_nonce(self) -> str:
        return server_nonce(self.random_bytes)

    def authenticator(self) -> SaslAuthenticator:
        """The SASL state of a new connection."""
        return SaslAuthenticator(self.enabled, self.server, self.max_reauth_ms,
                                 self.max_reauth_ms_by_mechanism)
