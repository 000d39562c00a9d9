"""Whole NACHA files: the writer and the parser, and the one set of rules both apply.

A file is, record by record (NACHA Operating Rules, Appendix Three, "Sequence of Records in ACH
Files"):

    1                    file header
    ( 5                  batch header
      ( 6 7* )+          entries, each followed by its addenda
      8 )*               batch control
    9                    file control
    9...9*               padding: lines of 94 "9"s filling the last block of 10 records

**One set of rules** (`Rules`) reads the records in order, keeping running counts, entry hashes
and totals, never a list of records: the parser feeds it every line of a file it receives, and
the writer every line it writes, so TX cannot write a file its own parser would refuse, and
what it writes re-parses to the same entries.

**The parser treats a file as hostile input**: `parse` reads the whole file once through the
rules before it returns anything (memory: the running totals, whatever the file's size); only a
file that passed is handed back, and its batches and entries are read again from the source
(`ParsedFile.batches`, `ParsedFile.entries`). Any broken rule refuses the whole file with a
`NachaError` naming the record number (its line, from 1), the record, the field and its
positions. What it refuses, beyond each field's kind (payments.nacha.fields):

- a record of the wrong length, an unknown record type, a record out of the order above, a
  batch without entries, anything after the file control but padding, a file that stops before
  its file control (truncated), a last block not filled with padding, or a whole block of it;
- line endings: every record ends with LF, or every record with CR LF, or no record has one
  (records back to back, as on the old tapes): the first record decides, the others must follow
  it; the last record's ending may be left out. A bare CR, a mix, a line break inside a record,
  a blank line, bytes that are not ASCII and anything after the last record (a trailing blank
  line, a DOS end-of-file mark) are refused;
- batch controls and the file control that do not add up: entry/addenda counts, entry hashes
  (the sum of the 8-digit Receiving DFI Identifications, its last 10 digits), debit and credit
  totals, the batch count, the block count; a batch control whose service class, company
  identification, ODFI identification or batch number is not its header's;
- batch numbers not ascending through the file; trace numbers not ascending within a batch, or
  not starting with the batch's ODFI identification;
- entries: a debit in a credits-only batch (220) or a credit in a debits-only one (225); a
  prenote with an amount; a WEB entry whose payment type code is not R, S or blank; an addenda
  record indicator that does not say whether addenda follow;
- addenda: on a forward entry (22/23/27/28/32/33/37/38) at most one addenda 05, numbered 1 and
  pointing to its entry (the last 7 digits of its trace number); a return (21/26/31/36 in a PPD,
  CCD or WEB batch) exactly one addenda 99; a Notification of Change (a COR batch, 21/26/31/36
  only) exactly one addenda 98; a 98 or 99 carrying another trace number than its entry's.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from payments.nacha.addenda import Addenda, PaymentAddenda, parse_addenda
from payments.nacha.batch_control import BatchControl
from payments.nacha.batch_header import BatchHeader
from payments.nacha.codes import CREDITS_ONLY, DEBITS_ONLY
from payments.nacha.entry import WEB_PAYMENT_TYPE_CODES, EntryDetail
from payments.nacha.fields import RECORD_LENGTH, NachaError, Record
from payments.nacha.file_control import BLOCKING_FACTOR, PADDING, FileControl
from payments.nacha.file_header import FileHeader

HASH_MODULUS = 10**10
LINE_ENDINGS = ("\n", "\r\n")


@dataclass(frozen=True)
class Entry:
    """An entry detail record and the addenda records that follow it."""

    detail: EntryDetail
    addenda: tuple[Addenda, ...] = ()


@dataclass(frozen=True)
class Batch:
    """A batch header and its entries. To write, `control` is left out: the writer computes it
    (a control given, such as a parsed one, must be the computed one; its message
    authentication code, which the writer cannot compute, is kept). `entries` may be any
    iterable when writing, so a large batch need not be held whole."""

    header: BatchHeader
    entries: Sequence[Entry] | Iterable[Entry] = ()
    control: BatchControl | None = field(default=None)


def trace_number(odfi_identification: str, sequence: int) -> str:
    """A trace number: the ODFI's 8-digit identification and a 7-digit entry sequence."""
    if not (len(odfi_identification) == 8 and odfi_identification.isdigit()):
        raise ValueError(f"{odfi_identification!r} is not an 8-digit ODFI identification")
    if not 1 <= sequence <= 9_999_999:
        raise ValueError(f"trace sequence {sequence} is outside 1-9999999")
    return f"{odfi_identification}{sequence:07d}"


# --- the rules ---------------------------------------------------------------------------------


def _kind(line: str) -> str:
    return {
        "1": "file header",
        "5": "batch header",
        "6": "entry detail",
        "7": "addenda",
        "8": "batch control",
        "9": "file control",
    }.get(line[:1], "record")


def _mismatch(record: Record, number: int, name: str, found, computed, what: str) -> NachaError:
    return record.LAYOUT.error(name, f"is {found}, but {what} {computed}", number)


class Rules:
    """The rules of a whole file, applied record by record (`feed`), then at its end
    (`finish`). Keeps the running counts and totals of the open batch and of the file, and the
    open entry, never the records seen."""

    # What may follow each record kind (by record type code); "" is the file's start.
    FOLLOWS = {
        "": "1",
        "1": "59",
        "5": "6",
        "6": "678",
        "7": "678",
        "8": "59",
    }

    def __init__(self):
        self.previous = ""
        self.header: FileHeader | None = None
        self.control: FileControl | None = None
        self.control_record = 0
        self.records = 0
        self.padding = 0
        # The file's running counts.
        self.batch_count = 0
        self.file_count = 0
        self.file_hash = 0
        self.file_debit = 0
        self.file_credit = 0
        self.last_batch_number = -1
        # The open batch and entry.
        self.batch: BatchHeader | None = None
        self.batch_record = 0
        self.batch_count_records = 0
        self.batch_hash = 0
        self.batch_debit = 0
        self.batch_credit = 0
        self.last_trace = ""
        self.entry: EntryDetail | None = None
        self.entry_record = 0
        self.addenda_seen = 0

    # -- records

    def feed(self, number: int, line: str) -> Record | None:
        """Check one record (the `number`th line of the file) and return it parsed; None for a
        padding record."""
        self.records = number
        if self.control is not None:
            if line != PADDING:
                raise NachaError(
                    "only padding records (94 '9's) may follow the file control",
                    record_number=number,
                    record=_kind(line),
                )
            self.padding += 1
            return None
        type_code = line[:1]
        if type_code not in ("1", "5", "6", "7", "8", "9"):
            raise NachaError(
                f"{type_code!r} is not a record type (1, 5, 6, 7, 8, 9)",
                record_number=number,
                record="record",
                field="record type code",
                positions=(1, 1),
            )
        if type_code not in self.FOLLOWS[self.previous]:
            expected = " or ".join(_kind(code) for code in self.FOLLOWS[self.previous])
            expected = f"an {expected}" if expected[0] in "aeiou" else f"a {expected}"
            after = f"after the {_kind(self.previous)}" if self.previous else "to start the file"
            raise NachaError(
                f"is out of order: {expected} is expected {after}",
                record_number=number,
                record=_kind(line),
                field="record type code",
                positions=(1, 1),
            )
        if type_code == "7" and self.previous == "6" and self.entry.addenda_record_indicator != 1:
            raise self.entry.LAYOUT.error(
                "addenda_record_indicator",
                f"is 0, but an addenda record follows (record {number})",
                self.entry_record,
            )
        if type_code in "68" and self.previous in "67":
            self._close_entry(number)
        record = {
            "1": self._file_header,
            "5": self._batch_header,
            "6": self._entry,
            "7": self._addenda,
            "8": self._batch_control,
            "9": self._file_control,
        }[type_code](number, line)
        self.previous = type_code
        return record

    def _file_header(self, number, line):
        self.header = FileHeader.from_line(line, number)
        return self.header

    def _batch_header(self, number, line):
        header = BatchHeader.from_line(line, number)
        if header.batch_number <= self.last_batch_number:
            raise header.LAYOUT.error(
                "batch_number",
                f"{header.batch_number} does not follow batch {self.last_batch_number}: "
                "batch numbers ascend through the file",
                number,
            )
        self.last_batch_number = header.batch_number
        self.batch, self.batch_record = header, number
        self.batch_count_records = self.batch_hash = self.batch_debit = self.batch_credit = 0
        self.last_trace = ""
        return header

    def _entry(self, number, line):
        entry = EntryDetail.from_line(line, number)
        batch, code = self.batch, entry.code
        if batch.service_class_code == CREDITS_ONLY and code.direction == "debit":
            raise entry.LAYOUT.error(
                "transaction_code",
                f"{entry.transaction_code} is a debit in a credits-only batch (service class "
                f"220, record {self.batch_record})",
                number,
            )
        if batch.service_class_code == DEBITS_ONLY and code.direction == "credit":
            raise entry.LAYOUT.error(
                "transaction_code",
                f"{entry.transaction_code} is a credit in a debits-only batch (service class "
                f"225, record {self.batch_record})",
                number,
            )
        if batch.standard_entry_class_code == "COR" and not code.is_return_or_noc:
            raise entry.LAYOUT.error(
                "transaction_code",
                f"{entry.transaction_code} in a COR batch: a notification of change is coded "
                "21, 26, 31 or 36",
                number,
            )
        if (
            batch.standard_entry_class_code == "WEB"
            and not code.is_return_or_noc
            # Compared stripped: files in the wild right-justify the code (" S").
            and entry.payment_type_code.strip() not in WEB_PAYMENT_TYPE_CODES
        ):
            raise entry.LAYOUT.error(
                "discretionary_data",
                f"{entry.payment_type_code!r} is not a WEB payment type code (R, S or blank)",
                number,
            )
        if not entry.trace_number.startswith(batch.odfi_identification):
            raise entry.LAYOUT.error(
                "trace_number",
                f"{entry.trace_number} does not start with the batch's ODFI identification "
                f"{batch.odfi_identification} (record {self.batch_record})",
                number,
            )
        if entry.trace_number <= self.last_trace:
            raise entry.LAYOUT.error(
                "trace_number",
                f"{entry.trace_number} does not follow {self.last_trace}: trace numbers ascend "
                "within a batch",
                number,
            )
        self.last_trace = entry.trace_number
        self.batch_count_records += 1
        self.batch_hash += int(entry.rdfi_identification)
        if code.direction == "debit":
            self.batch_debit += entry.amount
        else:
            self.batch_credit += entry.amount
        self.entry, self.entry_record, self.addenda_seen = entry, number, 0
        return entry

    def _expected_addenda(self) -> str:
        """The addenda type the open entry takes (each entry kind takes one addenda at most)."""
        if not self.entry.code.is_return_or_noc:
            return "05"
        if self.batch.standard_entry_class_code == "COR":
            return "98"
        return "99"

    def _addenda(self, number, line):
        addenda = parse_addenda(line, number)
        entry = self.entry
        expected, most = self._expected_addenda(), 1
        if line[1:3] != expected:
            what = {
                "05": "a forward entry takes addenda 05",
                "98": "a notification of change (COR) takes addenda 98",
                "99": "a return takes addenda 99",
            }[expected]
            raise NachaError(
                f"addenda type {line[1:3]} follows entry record {self.entry_record} "
                f"(transaction code {entry.transaction_code}, "
                f"{self.batch.standard_entry_class_code}): {what}",
                record_number=number,
                record=addenda.LAYOUT.record,
                field="addenda type code",
                positions=(2, 3),
            )
        self.addenda_seen += 1
        if self.addenda_seen > most:
            raise NachaError(
                f"is addenda {self.addenda_seen} of entry record {self.entry_record}: "
                f"{self.batch.standard_entry_class_code} entries take at most {most}",
                record_number=number,
                record=addenda.LAYOUT.record,
            )
        if isinstance(addenda, PaymentAddenda):
            if addenda.addenda_sequence_number != self.addenda_seen:
                raise _mismatch(
                    addenda,
                    number,
                    "addenda_sequence_number",
                    addenda.addenda_sequence_number,
                    self.addenda_seen,
                    "this is the entry's addenda",
                )
            if addenda.entry_detail_sequence_number != entry.trace_number[-7:]:
                raise _mismatch(
                    addenda,
                    number,
                    "entry_detail_sequence_number",
                    addenda.entry_detail_sequence_number,
                    entry.trace_number[-7:],
                    f"entry record {self.entry_record}'s trace number ends with",
                )
        elif addenda.trace_number != entry.trace_number:
            raise _mismatch(
                addenda,
                number,
                "trace_number",
                addenda.trace_number,
                entry.trace_number,
                f"entry record {self.entry_record}'s trace number is",
            )
        self.batch_count_records += 1
        return addenda

    def _close_entry(self, number):
        """The open entry ends (at record `number`): did its addenda come?"""
        entry = self.entry
        if entry.addenda_record_indicator == 1 and self.addenda_seen == 0:
            raise entry.LAYOUT.error(
                "addenda_record_indicator",
                f"is 1, but record {number} is not an addenda record",
                self.entry_record,
            )
        if entry.code.is_return_or_noc and self.addenda_seen == 0:
            what = "98" if self.batch.standard_entry_class_code == "COR" else "99"
            raise entry.LAYOUT.error(
                "addenda_record_indicator",
                f"transaction code {entry.transaction_code} is a return or notification of "
                f"change: its addenda {what} must follow",
                self.entry_record,
            )
        self.entry = None

    def computed_batch_control(self, message_authentication_code: str = "") -> BatchControl:
        """The control of the open batch, from the records fed since its header."""
        return BatchControl(
            service_class_code=self.batch.service_class_code,
            entry_addenda_count=self.batch_count_records,
            entry_hash=self.batch_hash % HASH_MODULUS,
            total_debit=self.batch_debit,
            total_credit=self.batch_credit,
            company_identification=self.batch.company_identification,
            odfi_identification=self.batch.odfi_identification,
            batch_number=self.batch.batch_number,
            message_authentication_code=message_authentication_code,
        )

    def _batch_control(self, number, line):
        control = BatchControl.from_line(line, number)
        batch = self.batch
        for name, computed, what in (
            ("service_class_code", batch.service_class_code, "the batch header has"),
            ("entry_addenda_count", self.batch_count_records, "the batch has"),
            ("entry_hash", self.batch_hash % HASH_MODULUS, "its entries add up to"),
            ("total_debit", self.batch_debit, "its debits add up to"),
            ("total_credit", self.batch_credit, "its credits add up to"),
            ("company_identification", batch.company_identification, "the batch header has"),
            ("odfi_identification", batch.odfi_identification, "the batch header has"),
            ("batch_number", batch.batch_number, "the batch header has"),
        ):
            found = getattr(control, name)
            if found != computed:
                raise _mismatch(
                    control,
                    number,
                    name,
                    repr(found) if isinstance(found, str) else found,
                    repr(computed) if isinstance(computed, str) else computed,
                    what,
                )
        self.batch_count += 1
        self.file_count += self.batch_count_records
        self.file_hash += self.batch_hash
        self.file_debit += self.batch_debit
        self.file_credit += self.batch_credit
        self.batch = None
        return control

    def computed_file_control(self, block_count: int) -> FileControl:
        return FileControl(
            batch_count=self.batch_count,
            block_count=block_count,
            entry_addenda_count=self.file_count,
            entry_hash=self.file_hash % HASH_MODULUS,
            total_debit=self.file_debit,
            total_credit=self.file_credit,
        )

    def _file_control(self, number, line):
        control = FileControl.from_line(line, number)
        for name, computed, what in (
            ("batch_count", self.batch_count, "the file has"),
            ("entry_addenda_count", self.file_count, "the batches have"),
            ("entry_hash", self.file_hash % HASH_MODULUS, "the batches add up to"),
            ("total_debit", self.file_debit, "the batches' debits add up to"),
            ("total_credit", self.file_credit, "the batches' credits add up to"),
        ):
            if getattr(control, name) != computed:
                raise _mismatch(control, number, name, getattr(control, name), computed, what)
        self.control, self.control_record = control, number
        return control

    def finish(self) -> None:
        """The file has ended: was it whole?"""
        if self.control is None:
            if not self.records:
                raise NachaError("the file is empty")
            raise NachaError(
                f"the file ends after record {self.records} ({_kind(self.previous)}) without "
                "its file control: it is truncated",
                record_number=self.records,
                record=_kind(self.previous),
            )
        if self.records % BLOCKING_FACTOR:
            raise self.control.LAYOUT.error(
                "block_count",
                f"the file has {self.records} records, not a multiple of the blocking factor "
                f"{BLOCKING_FACTOR}: its last block is not filled with padding records",
                self.control_record,
            )
        if self.padding >= BLOCKING_FACTOR:
            raise self.control.LAYOUT.error(
                "block_count",
                f"{self.padding} padding records follow: a whole block of padding",
                self.control_record,
            )
        blocks = self.records // BLOCKING_FACTOR
        if self.control.block_count != blocks:
            raise _mismatch(
                self.control,
                self.control_record,
                "block_count",
                self.control.block_count,
                blocks,
                f"the file's {self.records} records make",
            )


# --- reading lines -----------------------------------------------------------------------------

CHUNK = 1 << 16


def _not_ascii(data: bytes, number: int) -> NachaError:
    position = next(index for index, byte in enumerate(data) if byte > 0x7F)
    return NachaError(
        f"byte 0x{data[position]:02X} at position {position + 1} is not ASCII",
        record_number=number,
        record=_kind(data[:1].decode("ascii", "replace")),
    )


def read_lines(stream: BinaryIO) -> Iterator[str]:
    """The records of a file, each 94 characters, checking its line endings (module docstring):
    the first record decides LF, CR LF or none; the others must end alike."""
    buffer = stream.read(CHUNK)
    if not buffer:
        return
    head = buffer[: RECORD_LENGTH + 2]
    if head[RECORD_LENGTH : RECORD_LENGTH + 1] == b"\n":
        ending = b"\n"
    elif head[RECORD_LENGTH : RECORD_LENGTH + 2] == b"\r\n":
        ending = b"\r\n"
    else:
        ending = b""
    size = RECORD_LENGTH + len(ending)
    position, number, at_end = 0, 1, False
    while True:
        if len(buffer) - position < size + 2 and not at_end:
            more = stream.read(CHUNK)
            at_end = not more
            buffer = buffer[position:] + more
            position = 0
            continue
        if position == len(buffer):
            return
        record = buffer[position : position + RECORD_LENGTH]
        cut = min(
            (index for index in (record.find(b"\n"), record.find(b"\r")) if index >= 0), default=-1
        )
        if cut >= 0 or len(record) < RECORD_LENGTH:
            length = cut if cut >= 0 else len(record)
            reason = (
                "is an empty line"
                if length == 0 and cut >= 0
                else f"is {length} characters long; a record has {RECORD_LENGTH}"
            )
            if cut >= 0 and not ending and number > 1:
                reason += " (record 1 ended with no line ending, so no record may)"
            raise NachaError(
                reason, record_number=number, record=_kind(record[:1].decode("ascii", "replace"))
            )
        after = buffer[position + RECORD_LENGTH : position + size]
        last = position + RECORD_LENGTH == len(buffer) and at_end
        if after != ending and not last:
            following = buffer[position + RECORD_LENGTH : position + RECORD_LENGTH + 2]
            if following[:1] == b"\r" and ending != b"\r\n":
                names = {b"\n": "LF", b"": "no line ending"}
                reason = f"ends with CR; record 1 ended with {names[ending]}"
            elif following[:1] == b"\n" and ending == b"\r\n":
                reason = "ends with LF; record 1 ended with CR LF"
            else:
                reason = f"is longer than {RECORD_LENGTH} characters"
            raise NachaError(
                reason, record_number=number, record=_kind(record[:1].decode("ascii", "replace"))
            )
        try:
            text = record.decode("ascii")
        except UnicodeDecodeError:
            raise _not_ascii(record, number) from None
        yield text
        if last:
            return
        position += size
        number += 1


def _line_ending(stream: BinaryIO) -> str:
    head = stream.read(RECORD_LENGTH + 2)
    if head[RECORD_LENGTH : RECORD_LENGTH + 1] == b"\n":
        return "\n"
    if head[RECORD_LENGTH : RECORD_LENGTH + 2] == b"\r\n":
        return "\r\n"
    return ""


# --- parsing -----------------------------------------------------------------------------------


class ParsedFile:
    """A file that passed every rule. Its batches and entries are read again from the source
    when asked for, so a large file is never held whole."""

    def __init__(self, stream: BinaryIO, start: int, rules: Rules, line_ending: str):
        self._stream = stream
        self._start = start
        self.header: FileHeader = rules.header
        self.control: FileControl = rules.control
        self.record_count: int = rules.records
        self.line_ending = line_ending

    def records(self) -> Iterator[Record]:
        """Every record but the padding, in order (checked again as they are read: a source
        changed since `parse` is refused, not trusted)."""
        self._stream.seek(self._start)
        rules = Rules()
        for number, line in enumerate(read_lines(self._stream), 1):
            record = rules.feed(number, line)
            if record is not None:
                yield record
        rules.finish()

    def entries(self) -> Iterator[tuple[BatchHeader, Entry]]:
        """Each entry with its addenda, and the header of its batch; one entry at a time."""
        header, detail, addenda = None, None, []
        for record in self.records():
            if isinstance(record, BatchHeader):
                header = record
            elif isinstance(record, EntryDetail | BatchControl):
                if detail is not None:
                    yield header, Entry(detail, tuple(addenda))
                detail, addenda = (record, []) if isinstance(record, EntryDetail) else (None, [])
            elif detail is not None:
                addenda.append(record)

    def batches(self) -> Iterator[Batch]:
        """Each batch with its entries and its control; one batch at a time (a batch's
        entries are held together: for a file of one huge batch, use `entries`)."""
        header, entries, detail, addenda = None, [], None, []
        for record in self.records():
            if isinstance(record, BatchHeader):
                header, entries = record, []
            elif isinstance(record, EntryDetail | BatchControl):
                if detail is not None:
                    entries.append(Entry(detail, tuple(addenda)))
                detail, addenda = (record, []) if isinstance(record, EntryDetail) else (None, [])
                if isinstance(record, BatchControl):
                    yield Batch(header, tuple(entries), record)
            elif detail is not None:
                addenda.append(record)


def parse(source: bytes | BinaryIO) -> ParsedFile:
    """Check a whole file against every rule (module docstring) and return it, or raise
    `NachaError` naming the first record and field that broke one. `source` is the file's bytes
    or a binary file object that can seek (it is read twice: once to check, once to hand out
    the batches)."""
    stream = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
    if not stream.seekable():
        raise TypeError("parse needs bytes or a seekable binary file: it reads the file twice")
    start = stream.tell()
    rules = Rules()
    for number, line in enumerate(read_lines(stream), 1):
        rules.feed(number, line)
    rules.finish()
    stream.seek(start)
    ending = _line_ending(stream)
    return ParsedFile(stream, start, rules, ending)


# --- writing -----------------------------------------------------------------------------------


def numbered(
    batches: Iterable[Batch], *, first_batch_number: int = 1, first_trace_sequence: int = 1
) -> list[Batch]:
    """The batches numbered as the writer must number them: batch numbers ascending from
    `first_batch_number`; every entry a trace number (its batch's ODFI identification and a
    7-digit sequence running through the file from `first_trace_sequence`, which the caller
    allocates so that trace numbers stay unique across files) and the addenda record indicator
    its addenda call for; addenda 05 numbered from 1 and pointing to their entry; addenda 98 and
    99 carrying their entry's trace number."""
    sequence, result = first_trace_sequence, []
    for offset, batch in enumerate(batches):
        header = batch.header.replace(batch_number=first_batch_number + offset)
        entries = []
        for entry in batch.entries:
            trace = trace_number(header.odfi_identification, sequence)
            sequence += 1
            addenda = tuple(
                each.replace(addenda_sequence_number=index, entry_detail_sequence_number=trace[-7:])
                if isinstance(each, PaymentAddenda)
                else each.replace(trace_number=trace)
                for index, each in enumerate(entry.addenda, 1)
            )
            detail = entry.detail.replace(
                trace_number=trace, addenda_record_indicator=1 if addenda else 0
            )
            entries.append(Entry(detail, addenda))
        result.append(Batch(header, tuple(entries)))
    return result


def write_lines(header: FileHeader, batches: Iterable[Batch]) -> Iterator[str]:
    """The records of a file, each 94 characters, padding included: the batch controls and the
    file control computed, every line checked by the parser's rules as it is made (a batch TX
    could not read back is refused here, with the record number it would have had). Entries
    are read from each batch once, as they come."""
    rules = Rules()
    number = 0

    def checked(record_line: str) -> str:
        nonlocal number
        number += 1
        rules.feed(number, record_line)
        return record_line

    yield checked(header.to_line())
    for batch in batches:
        yield checked(batch.header.to_line())
        for entry in batch.entries:
            yield checked(entry.detail.to_line())
            for addenda in entry.addenda:
                yield checked(addenda.to_line())
        given = batch.control
        control = rules.computed_batch_control(
            given.message_authentication_code if given is not None else ""
        )
        if given is not None and given != control:
            raise NachaError(
                f"the batch's given control {given} is not the computed {control}",
                record_number=number + 1,
                record="batch control",
            )
        yield checked(control.to_line())
    records = number + 1
    blocks = -(-records // BLOCKING_FACTOR)
    yield checked(rules.computed_file_control(blocks).to_line())
    for _ in range(blocks * BLOCKING_FACTOR - records):
        yield checked(PADDING)
    rules.finish()


def write_to(
    stream: BinaryIO, header: FileHeader, batches: Iterable[Batch], *, line_ending: str = "\n"
) -> int:
    """Write a whole file to a binary stream a record at a time, every record (the last
    included) followed by `line_ending` (LF unless the ODFI asks for CR LF); return the number
    of records. A batch refused midway leaves a partial stream: write to a temporary file and
    keep it only once this returns."""
    if line_ending not in LINE_ENDINGS:
        raise ValueError(f"line ending {line_ending!r} is not LF or CR LF")
    count = 0
    for line in write_lines(header, batches):
        stream.write((line + line_ending).encode("ascii"))
        count += 1
    return count


def write_file(header: FileHeader, batches: Iterable[Batch], *, line_ending: str = "\n") -> bytes:
    """A whole file's bytes (`write_to` into memory)."""
    buffer = io.BytesIO()
    write_to(buffer, header, batches, line_ending=line_ending)
    return buffer.getvalue()
