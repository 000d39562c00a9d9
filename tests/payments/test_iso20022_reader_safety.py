"""Every ISO 20022 document TX reads is hostile input: parsed with entity expansion, DTDs and
network access off, refused whole when it carries a DOCTYPE, when it is not well-formed, when it
is another message than the one expected, and when it does not validate against the message's
official XSD (with the validator's own message, line and path)."""

import time

import pytest

from payments.iso20022.document import read
from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import CAMT_054, MESSAGE_TYPES, PAIN_001, PAIN_002
from payments.iso20022.pain001 import read_initiation, write_initiation
from tests.payments.iso20022_helpers import initiation

NAMESPACE = PAIN_001.namespace

BILLION_LAUGHS = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE Document [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<Document xmlns="{NAMESPACE}"><CstmrCdtTrfInitn><GrpHdr><MsgId>&lol9;</MsgId>
</GrpHdr></CstmrCdtTrfInitn></Document>
""".encode()

EXTERNAL_ENTITY = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Document xmlns="{NAMESPACE}"><CstmrCdtTrfInitn><GrpHdr><MsgId>&xxe;</MsgId>
</GrpHdr></CstmrCdtTrfInitn></Document>
""".encode()

EXTERNAL_DTD = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE Document SYSTEM "http://127.0.0.1:9/evil.dtd">
<Document xmlns="{NAMESPACE}"/>
""".encode()


def _refused(data: bytes, message=PAIN_001) -> Iso20022Error:
    with pytest.raises(Iso20022Error) as caught:
        read(data, message)
    return caught.value


def test_billion_laughs_is_refused_without_expansion():
    started = time.perf_counter()
    error = _refused(BILLION_LAUGHS)
    assert time.perf_counter() - started < 1  # nothing was expanded
    # libxml2 (2.12 on) stops the parse itself at the declarations' amplification; an older one
    # parses them unexpanded and the DOCTYPE is refused: a refusal either way.
    assert "DOCTYPE is refused" in str(error) or "amplification" in str(error)
    assert "lollol" not in str(error)


def test_external_entity_is_refused_and_never_read():
    error = _refused(EXTERNAL_ENTITY)
    assert "DOCTYPE is refused" in str(error)
    assert "root:" not in str(error)  # /etc/passwd's first line was not read into anything


def test_external_dtd_is_refused_and_never_fetched():
    assert "DOCTYPE is refused" in str(_refused(EXTERNAL_DTD))


def test_the_reader_of_a_message_refuses_hostile_documents_too():
    with pytest.raises(Iso20022Error, match="DOCTYPE is refused"):
        read_initiation(EXTERNAL_ENTITY)


def test_a_truncated_document_is_refused_with_the_parsers_message():
    data = write_initiation(initiation())
    error = _refused(data[: len(data) // 2])
    assert error.reason.startswith("not well-formed XML: ")
    assert error.line is not None


def test_an_invalid_document_is_refused_with_the_validators_message_line_and_path():
    data = write_initiation(initiation()).replace(b"<PmtMtd>TRF</PmtMtd>", b"<PmtMtd>XXX</PmtMtd>")
    error = _refused(data)
    assert error.reason.startswith("does not validate against pain.001.001.09.xsd: ")
    assert "'XXX' is not an element of the set" in error.reason
    assert error.line == 15
    assert error.path == "/Document/CstmrCdtTrfInitn/PmtInf[1]/PmtMtd"


def test_a_missing_mandatory_element_is_refused_by_the_validator():
    data = write_initiation(initiation()).replace(b"<MsgId>TX-MSG-0001</MsgId>", b"")
    error = _refused(data)
    assert error.reason.endswith(
        f"Element '{{{NAMESPACE}}}CreDtTm': This element is not expected. "
        f"Expected is ( {{{NAMESPACE}}}MsgId )."
    )
    assert error.path == "/Document/CstmrCdtTrfInitn/GrpHdr/CreDtTm"


def test_a_document_of_another_message_type_is_refused_by_name():
    data = write_initiation(initiation())
    error = _refused(data, CAMT_054)
    assert error.reason == (
        "is a pain.001.001.09 document, not camt.054.001.08 "
        "(bank to customer debit credit notification)"
    )
    error = _refused(data.replace(b"pain.001.001.09", b"pain.001.001.03"), PAIN_002)
    assert "is a {urn:iso:std:iso:20022:tech:xsd:pain.001.001.03}Document" in error.reason


def test_text_is_refused_the_encoding_is_the_documents():
    assert "from its bytes" in str(_refused(write_initiation(initiation()).decode()))


def test_every_schema_compiles():
    for message in MESSAGE_TYPES.values():
        assert message.schema() is not None
        assert message.xsd.read_text().count(f'targetNamespace="{message.namespace}"') == 1
