"""SCRAM-SHA-256 and SCRAM-SHA-512 servers (RFC 5802/7677) as Kafka's ScramSaslServer.

Messages are parsed with Kafka's grammar (ScramMessages): an optional ``a=`` authzid, which
must equal the user; Kafka's extensions after the nonce (``tokenauth`` is the one Kafka
knows; others are ignored but, as in Kafka, kept in the AuthMessage); only the ``n`` GS2
flag (no channel binding). As Kafka, the AuthMessage is rebuilt from the parsed fields.
kcoord has no delegation tokens, so ``tokenauth=true`` fails as an unknown token does.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import re
from collections.abc import Callable

from coordinator.security.sasl import (
    SASLNAME_PATTERN,
    Challenge,
    Complete,
    Failure,
    RandomBytes,
    SaslStep,
)
from coordinator.security.scram_credentials import (
    MIN_ITERATIONS,
    ScramCredential,
    ScramCredentialStore,
    hash_name,
    mechanism_name,
)
from wire.constants import ScramMechanism

__all__ = ["ScramServer", "server_nonce"]

_VALUE = r"[\x01-\x2b\x2d-\x7f]+"  # [\x01-\x7F] less ','
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"  # [\x21-\x7E] less ','
_B64 = "[a-zA-Z0-9/+]"
_BASE64 = f"(?:{_B64}{{4}})*(?:{_B64}{{3}}=|{_B64}{{2}}==)?"
_RESERVED = rf"(?:m={_VALUE},)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{SASLNAME_PATTERN}))?,{_RESERVED}n=(?P<saslname>{SASLNAME_PATTERN}),"
    rf"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})"
)
_CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_BASE64})"
)
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


class _State(enum.Enum):
    RECEIVE_CLIENT_FIRST_MESSAGE = "RECEIVE_CLIENT_FIRST_MESSAGE"
    RECEIVE_CLIENT_FINAL_MESSAGE = "RECEIVE_CLIENT_FINAL_MESSAGE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


def _parse_extensions(text: str) -> dict[str, str]:
    # Kafka's Utils.parseMap(extensions, "=", ","): a later key replaces an earlier value.
    extensions: dict[str, str] = {}
    for item in text.split(",") if text else ():
        key, _, value = item.partition("=")
        extensions[key] = value
    return extensions


def server_nonce(random_bytes: RandomBytes) -> str:
    """A server nonce as Kafka makes one (ScramFormatter.secureRandomString)."""
    # Kafka's ScramFormatter.secureRandomString: 130 random bits in base 36.
    number = int.from_bytes(random_bytes(17), "big") & ((1 << 130) - 1)
    digits = []
    while True:
        number, digit = divmod(number, 36)
        digits.append(_BASE36[digit])
        if not number:
            return "".join(reversed(digits))


class ScramServer:
    """One SCRAM exchange: client-first -> server-first, client-final -> server-final."""

    __slots__ = (
        "_authorization_id", "_client_first_bare", "_credential", "_credentials", "_hash",
        "_new_nonce", "_nonce", "_server_first", "_state", "scram_mechanism",
    )

    def __init__(
        self,
        mechanism: ScramMechanism,
        credentials: ScramCredentialStore,
        new_nonce: Callable[[], str],
    ) -> None:
        """``new_nonce`` makes the server's part of the nonce (``server_nonce`` over the
        runtime's randomness; a test passes RFC 7677's)."""
        self.scram_mechanism = mechanism
        self._hash = hash_name(mechanism)
        self._credentials = credentials
        self._new_nonce = new_nonce
        self._state = _State.RECEIVE_CLIENT_FIRST_MESSAGE
        self._clear()

    @property
    def mechanism(self) -> str:
        return mechanism_name(self.scram_mechanism)

    def _clear(self) -> None:
        self._credential: ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._authorization_id = ""

    def evaluate(self, response: bytes, now_ms: int) -> SaslStep:
        if self._state is _State.RECEIVE_CLIENT_FIRST_MESSAGE:
            step = self._client_first(response)
        elif self._state is _State.RECEIVE_CLIENT_FINAL_MESSAGE:
            step = self._client_final(response)
        else:
            return Failure(
                f"Unexpected challenge in Sasl server state {self._state.value}",
                illegal_state=True,
            )
        if not isinstance(step, Challenge):
            self._clear()
            self._state = _State.COMPLETE if isinstance(step, Complete) else _State.FAILED
        return step

    def _client_first(self, response: bytes) -> SaslStep:
        match = _CLIENT_FIRST.fullmatch(response.decode("utf-8", errors="replace"))
        if match is None:
            return Failure(None)  # "Invalid SCRAM client first message format"
        extensions = _parse_extensions(match["extensions"][1:])
        saslname = match["saslname"]
        username = saslname.replace("=2C", ",").replace("=3D", "=")
        if extensions.get("tokenauth", "").lower() == "true":
            return Failure(None)  # "Token Authentication failed: Invalid tokenId"
        credential = self._credentials.lookup(username, self.scram_mechanism)
        if credential is None:
            return Failure(None)  # "Authentication failed: Invalid user credentials"
        authzid = match["authzid"] or ""
        if authzid and authzid != username:
            return Failure(
                "Authentication failed: Client requested an authorization id that is "
                "different from username"
            )
        if credential.iterations < MIN_ITERATIONS:
            return Failure(None)  # "Iterations ... is less than the minimum ..."
        nonce = match["nonce"] + self._new_nonce()
        salt = base64.b64encode(credential.salt).decode("ascii")
        server_first = f"r={nonce},s={salt},i={credential.iterations}"
        bare = f"n={saslname},r={match['nonce']}"
        if extensions:
            bare += "," + ",".join(f"{k}={v}" for k, v in extensions.items())
        self._credential = credential
        self._client_first_bare = bare
        self._server_first = server_first
        self._nonce = nonce
        self._authorization_id = username
        self._state = _State.RECEIVE_CLIENT_FINAL_MESSAGE
        return Challenge(server_first.encode("ascii"))

    def _client_final(self, response: bytes) -> SaslStep:
        match = _CLIENT_FINAL.fullmatch(response.decode("utf-8", errors="replace"))
        credential = self._credential
        if match is None or credential is None:
            return Failure(None)  # "Invalid SCRAM client final message format"
        if match["nonce"] != self._nonce:
            return Failure(None)  # "Invalid client nonce in the final client message."
        try:
            channel = base64.b64decode(match["channel"], validate=True)
            proof = base64.b64decode(match["proof"], validate=True)
        except binascii.Error:
            return Failure(None)
        without_proof = f"c={base64.b64encode(channel).decode('ascii')},r={match['nonce']}"
        auth_message = (
            f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        )
        client_signature = hmac.new(credential.stored_key, auth_message, self._hash).digest()
        if len(proof) != len(client_signature):
            return Failure(None)  # "Invalid client credentials"
        client_key = bytes(a ^ b for a, b in zip(client_signature, proof, strict=True))
        computed_stored_key = hashlib.new(self._hash, client_key).digest()
        if not hmac.compare_digest(computed_stored_key, credential.stored_key):
            return Failure(None)  # "Invalid client credentials"
        server_signature = hmac.new(credential.server_key, auth_message, self._hash).digest()
        return Complete(
            b"v=" + base64.b64encode(server_signature), self._authorization_id
        )
