"""The principal of a TLS client: ``User:`` + the certificate subject's distinguished name in
RFC 2253 form, as Java's ``X500Principal.getName()`` prints it, which Kafka's default
``ssl.principal.mapping.rules`` (``DEFAULT``) keeps unchanged.

Pure functions over DER: the runtime passes ``SSLObject.getpeercert(binary_form=True)``. Java's
form: relative distinguished names last-first, joined by ``,``; several attributes of one RDN
joined by ``+``; the RFC 2253 keywords (CN, C, L, ST, O, OU, STREET, DC, UID) by name, any
other attribute as its dotted OID with ``#`` and the hex of its DER value; in values, each of
``,=+<>#;"\\`` and leading or trailing spaces are escaped with a backslash.
"""

from __future__ import annotations

__all__ = [
    "ANONYMOUS",
    "distinguished_name",
    "principal_from_certificate",
    "subject_of_certificate",
]

ANONYMOUS = "User:ANONYMOUS"
"""The principal of a PLAINTEXT connection, or of a TLS client without a certificate."""

_KEYWORDS = {
    "2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O",
    "2.5.4.11": "OU", "2.5.4.9": "STREET", "0.9.2342.19200300.100.1.25": "DC",
    "0.9.2342.19200300.100.1.1": "UID",
}
# The string types Java prints as text (PrintableString, T61String, IA5String,
# GeneralString, BMPString, UTF8String); any other value is printed as hex.
_STRING_TAGS = {0x13: "latin-1", 0x14: "latin-1", 0x16: "latin-1", 0x1B: "latin-1",
                0x1E: "utf-16-be", 0x0C: "utf-8"}
_ESCAPED = ',=+<>#;"\\'


class _Der:
    """A reader of DER tag-length-value items."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def read(self) -> tuple[int, bytes, bytes]:
        """(tag, contents, the whole encoding)."""
        data, start = self.data, self.pos
        if start + 2 > len(data):
            raise ValueError("truncated DER")
        tag, length, pos = data[start], data[start + 1], start + 2
        if length & 0x80:
            count = length & 0x7F
            if count == 0 or count > 4 or pos + count > len(data):
                raise ValueError("bad DER length")
            length = int.from_bytes(data[pos:pos + count], "big")
            pos += count
        end = pos + length
        if end > len(data):
            raise ValueError("truncated DER")
        self.pos = end
        return tag, data[pos:end], data[start:end]


def _oid(contents: bytes) -> str:
    arcs: list[int] = []
    value = 0
    for byte in contents:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    if not arcs:
        raise ValueError("empty OID")
    first = min(arcs[0] // 40, 2)
    return ".".join(str(a) for a in (first, arcs[0] - 40 * first, *arcs[1:]))


def _escape(text: str) -> str:
    chars = "".join("\\" + c if c in _ESCAPED else c for c in text)
    lead = 0
    while lead < len(chars) and chars[lead] in " \r":
        lead += 1
    trail = len(chars) - 1
    while trail >= 0 and chars[trail] in " \r":
        trail -= 1
    return "".join("\\" + c if i < lead or i > trail else c for i, c in enumerate(chars))


def _attribute(encoded: bytes) -> str:
    reader = _Der(encoded)
    oid_tag, oid_contents, _ = reader.read()
    if oid_tag != 0x06:
        raise ValueError("attribute type is not an OID")
    value_tag, value, whole = reader.read()
    oid = _oid(oid_contents)
    keyword = _KEYWORDS.get(oid)
    encoding = _STRING_TAGS.get(value_tag)
    if keyword is None or encoding is None:
        return f"{keyword or oid}=#{whole.hex()}"
    return f"{keyword}={_escape(value.decode(encoding, errors='replace'))}"


def distinguished_name(name_der: bytes) -> str:
    """An X.501 Name (DER) in Java's RFC 2253 form."""
    rdns = []
    names = _Der(name_der)
    tag, sequence, _ = names.read()
    if tag != 0x30:
        raise ValueError("a Name is a SEQUENCE")
    reader = _Der(sequence)
    while not reader.at_end():
        tag, rdn, _ = reader.read()
        if tag != 0x31:
            raise ValueError("an RDN is a SET")
        attributes = _Der(rdn)
        parts = []
        while not attributes.at_end():
            attribute_tag, attribute, _ = attributes.read()
            if attribute_tag != 0x30:
                raise ValueError("an attribute is a SEQUENCE")
            parts.append(_attribute(attribute))
        rdns.append("+".join(parts))
    return ",".join(reversed(rdns))


def subject_of_certificate(certificate_der: bytes) -> bytes:
    """The subject Name (DER) of an X.509 certificate (RFC 5280 TBSCertificate)."""
    tag, certificate, _ = _Der(certificate_der).read()
    if tag != 0x30:
        raise ValueError("a certificate is a SEQUENCE")
    tag, tbs, _ = _Der(certificate).read()
    if tag != 0x30:
        raise ValueError("a TBSCertificate is a SEQUENCE")
    fields = _Der(tbs)
    tag, _, _ = fields.read()
    if tag == 0xA0:  # [0] version, then the serial number
        fields.read()
    for _ in range(3):  # signature algorithm, issuer, validity
        fields.read()
    tag, _, subject = fields.read()
    if tag != 0x30:
        raise ValueError("the subject is a SEQUENCE")
    return subject


def principal_from_certificate(certificate_der: bytes | None) -> str:
    """``User:`` + the subject's RFC 2253 name; ANONYMOUS without a certificate."""
    if not certificate_der:
        return ANONYMOUS
    return "User:" + distinguished_name(subject_of_certificate(certificate_der))
