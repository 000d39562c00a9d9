"""Reading and writing an ISO 20022 document: the safe parser, the XSD check, and the small
helpers every message module builds and reads elements with.

**Reading** (`read`) is for hostile input, in this order, each step refusing the whole document
with an `Iso20022Error`:

1. bytes only (the XML declaration, not the caller, says the encoding);
2. parsed by libxml2 with entity expansion, DTD loading and network access off and its size
   limits on (`huge_tree=False`): a billion-laughs document cannot expand and an external
   entity (`file:///etc/passwd`, `http://...`) is never fetched;
3. a document with a DOCTYPE is refused outright: no ISO 20022 message has one, and one that
   does is at best a mistake and at worst an attack;
4. the root must be the `Document` of the expected message's namespace (a pain.002 given where
   a camt.054 is expected is refused by name before any validation);
5. validated against the message's official XSD; the first error the validator reports is the
   refusal, with its own wording, line and path.

**Writing** (`write`) serialises UTF-8 with an XML declaration and then reads the result back
through `read`: TX cannot write a document its own reader (and the XSD) would refuse.
"""

from __future__ import annotations

from lxml import etree

from payments.iso20022.errors import Iso20022Error
from payments.iso20022.messages import BY_NAMESPACE, MessageType

Element = etree._Element
DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'


def safe_parser() -> etree.XMLParser:
    # A new parser per document: lxml parsers keep state (their error log) between uses.
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_blank_text=True,
    )


def read(data: bytes, message: MessageType) -> Element:
    """The document's root element, once `data` passed every step of the module docstring."""
    if not isinstance(data, bytes):
        raise Iso20022Error(
            "a document is read from its bytes (its XML declaration says the encoding)",
            message_type=message.name,
        )
    try:
        tree = etree.ElementTree(etree.fromstring(data, safe_parser()))
    except etree.XMLSyntaxError as error:
        raise Iso20022Error(
            f"not well-formed XML: {error.msg}", message_type=message.name, line=error.lineno
        ) from None
    docinfo = tree.docinfo
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise Iso20022Error(
            "a DOCTYPE is refused: ISO 20022 messages have no DTD and TX expands no entity",
            message_type=message.name,
            line=1,
        )
    root = tree.getroot()
    qname = etree.QName(root)
    if qname.namespace != message.namespace or qname.localname != "Document":
        other = BY_NAMESPACE.get(qname.namespace or "")
        found = other.name if other else f"{{{qname.namespace or ''}}}{qname.localname}"
        raise Iso20022Error(
            f"is a {found} document, not {message.name} ({message.title})",
            message_type=message.name,
            line=root.sourceline,
        )
    schema = message.schema()
    if not schema.validate(tree):
        first = schema.error_log[0]
        raise Iso20022Error(
            f"does not validate against {message.xsd.name}: {first.message}",
            message_type=message.name,
            line=first.line,
            path=_readable(tree, first.path),
        )
    return root


def _readable(tree: etree._ElementTree, xpath: str | None) -> str | None:
    """libxml2 names the element in error as `/*/*[2]/*[5]` (the namespace has no prefix);
    the path of local names (`/Document/CstmrCdtTrfInitn/PmtInf/...`) says more."""
    if not xpath:
        return None
    try:
        found = tree.xpath(xpath)
    except etree.XPathError:
        return xpath
    if not found or not isinstance(found[0], etree._Element):
        return xpath
    return path_of(found[0])


def path_of(element: Element) -> str:
    """The element's path of local names, with a position where siblings share its name."""
    steps = []
    while element is not None:
        name = etree.QName(element).localname
        parent = element.getparent()
        if parent is not None:
            alike = [each for each in parent if each.tag == element.tag]
            if len(alike) > 1:
                name = f"{name}[{alike.index(element) + 1}]"
        steps.append(name)
        element = parent
    return "/" + "/".join(reversed(steps))


def write(root: Element, message: MessageType) -> bytes:
    """The document as UTF-8 bytes, checked by `read` before it is returned."""
    # The declaration written by hand: lxml's uses single quotes, which some banks' parsers
    # (wrongly) refuse.
    data = DECLARATION + etree.tostring(root, encoding="UTF-8", pretty_print=True)
    read(data, message)
    return data


# --- building ----------------------------------------------------------------------------------


def document(message: MessageType) -> tuple[Element, Element]:
    """A new `Document` of the message's namespace and the message's root element inside it."""
    root = etree.Element(f"{{{message.namespace}}}Document", nsmap={None: message.namespace})
    return root, sub(root, message.root)


def sub(parent: Element, tag: str, text: str | None = None, **attrib: str) -> Element:
    """A child element in the parent's namespace; `tag` may be a path (`"Id/IBAN"`), each step
    made anew."""
    namespace = etree.QName(parent).namespace
    element = parent
    for step in tag.split("/"):
        element = etree.SubElement(element, f"{{{namespace}}}{step}")
    if text is not None:
        element.text = text
    for key, value in attrib.items():
        element.set(key, value)
    return element


# --- reading -----------------------------------------------------------------------------------


def _path(element: Element, path: str) -> str:
    namespace = etree.QName(element).namespace
    return "/".join(f"{{{namespace}}}{step}" for step in path.split("/"))


def find(element: Element, path: str) -> Element | None:
    return element.find(_path(element, path))


def findall(element: Element, path: str) -> list[Element]:
    return element.findall(_path(element, path))


def text(element: Element, path: str) -> str | None:
    """The text of the first element at `path`, or None when there is none."""
    found = find(element, path)
    return None if found is None else (found.text or "")


def required(element: Element, path: str, message: MessageType) -> str:
    """The text at `path`, which the profile TX reads requires though the XSD leaves it optional
    (the XSD already refused a document without a mandatory element)."""
    found = find(element, path)
    if found is None:
        raise refusal(element, f"{path} is missing", message)
    return found.text or ""


def refusal(element: Element, reason: str, message: MessageType) -> Iso20022Error:
    """An error for a rule the XSD cannot say, placed at `element` (line and path)."""
    return Iso20022Error(
        reason,
        message_type=message.name,
        line=element.sourceline,
        path=path_of(element),
    )
