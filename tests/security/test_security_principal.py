"""TLS client principals: ``User:`` + the subject in Java's RFC 2253 form (Kafka's DEFAULT
``ssl.principal.mapping.rules``), over certificates the ``cryptography`` package makes."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from coordinator.security.principal import (
    ANONYMOUS,
    distinguished_name,
    principal_from_certificate,
    subject_of_certificate,
)

KEY = ec.generate_private_key(ec.SECP256R1())


def certificate(subject: x509.Name, *, version_one: bool = False) -> bytes:
    """A self-signed certificate (DER) for ``subject``."""
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test CA")]))
        .public_key(KEY.public_key())
        .serial_number(4242)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
    )
    cert = builder.sign(KEY, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.DER)


def name(*attributes: tuple[x509.ObjectIdentifier, str]) -> x509.Name:
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in attributes])


def test_common_subject_is_printed_most_specific_first() -> None:
    subject = name(
        (NameOID.COUNTRY_NAME, "US"), (NameOID.STATE_OR_PROVINCE_NAME, "CA"),
        (NameOID.LOCALITY_NAME, "Palo Alto"), (NameOID.ORGANIZATION_NAME, "Acme"),
        (NameOID.ORGANIZATIONAL_UNIT_NAME, "Eng"), (NameOID.COMMON_NAME, "alice"),
    )
    der = certificate(subject)
    assert principal_from_certificate(der) == "User:CN=alice,OU=Eng,O=Acme,L=Palo Alto,ST=CA,C=US"
    # Where RFC 4514 and Java's RFC 2253 agree, cryptography's own rendering matches.
    assert distinguished_name(subject.public_bytes()) == subject.rfc4514_string()


def test_subject_is_found_in_the_certificate() -> None:
    subject = name((NameOID.COMMON_NAME, "client-1"))
    assert subject_of_certificate(certificate(subject)) == subject.public_bytes()


def test_special_characters_are_escaped_as_java_does() -> None:
    subject = name(
        (NameOID.ORGANIZATION_NAME, "Acme, Inc."),
        (NameOID.COMMON_NAME, 'a+b=c;d<e>f#g"h\\i'),
    )
    assert principal_from_certificate(certificate(subject)) == (
        'User:CN=a\\+b\\=c\\;d\\<e\\>f\\#g\\"h\\\\i,O=Acme\\, Inc.'
    )


def test_leading_and_trailing_spaces_are_escaped() -> None:
    subject = name((NameOID.COMMON_NAME, "  padded "))
    assert distinguished_name(subject.public_bytes()) == "CN=\\ \\ padded\\ "


def test_non_rfc2253_attributes_are_oid_and_hex_der() -> None:
    # Java prints EMAILADDRESS, SERIALNUMBER and other non-RFC 2253 keywords as the OID
    # with '#' and the hex of the value's DER encoding.
    subject = name(
        (NameOID.EMAIL_ADDRESS, "john@example.com"), (NameOID.SERIAL_NUMBER, "42"),
        (NameOID.COMMON_NAME, "john"),
    )
    email = b"john@example.com"
    assert distinguished_name(subject.public_bytes()) == (
        "CN=john,2.5.4.5=#13023432,1.2.840.113549.1.9.1=#16"
        + format(len(email), "02x") + email.hex()
    )


def test_domain_components_and_uid_use_their_keywords() -> None:
    subject = name(
        (NameOID.DOMAIN_COMPONENT, "com"), (NameOID.DOMAIN_COMPONENT, "example"),
        (NameOID.USER_ID, "jdoe"), (NameOID.STREET_ADDRESS, "1 Main St"),
    )
    assert distinguished_name(subject.public_bytes()) == (
        "STREET=1 Main St,UID=jdoe,DC=example,DC=com"
    )


def test_multi_valued_rdn_joins_with_plus_in_der_order() -> None:
    rdn = x509.RelativeDistinguishedName([
        x509.NameAttribute(NameOID.COMMON_NAME, "alice"),
        x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Eng"),
    ])
    subject = x509.Name([x509.RelativeDistinguishedName(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme")]
    ), rdn])
    der = certificate(subject)
    parsed = x509.load_der_x509_certificate(der).subject.rdns[-1]
    in_der_order = "+".join(
        f"{'CN' if a.oid == NameOID.COMMON_NAME else 'OU'}={a.value}" for a in parsed
    )
    assert principal_from_certificate(der) == f"User:{in_der_order},O=Acme"


def test_utf8_values_are_text() -> None:
    subject = name((NameOID.COMMON_NAME, "Zoë Ünicode"))
    assert distinguished_name(subject.public_bytes()) == "CN=Zoë Ünicode"


def test_no_certificate_is_anonymous() -> None:
    assert principal_from_certificate(None) == ANONYMOUS == "User:ANONYMOUS"
    assert principal_from_certificate(b"") == ANONYMOUS


@pytest.mark.parametrize("garbage", [b"\x30", b"\x30\x05\x01", b"\x04\x00", b"\x30\x00"])
def test_malformed_der_raises_value_error(garbage: bytes) -> None:
    with pytest.raises(ValueError):
        principal_from_certificate(garbage)
