"""What the NACHA file tests share: a header, batches and entries of every kind TX writes."""

import datetime

from payments.nacha.addenda import PaymentAddenda
from payments.nacha.batch_header import BatchHeader
from payments.nacha.entry import EntryDetail
from payments.nacha.file import Batch, Entry, numbered, write_file
from payments.nacha.file_header import FileHeader

ODFI = "09100001"  # 091000019, the ODFI's routing number
RDFI_A = "021000021"
RDFI_B = "121000248"
RDFI_C = "026009593"


def file_header(**changes) -> FileHeader:
    values = dict(
        immediate_destination="091000019",
        immediate_origin="1234567890",
        file_creation_date=datetime.date(2026, 3, 5),
        file_creation_time=datetime.time(16, 45),
        file_id_modifier="A",
        immediate_destination_name="WELLS FARGO",
        immediate_origin_name="TX DEMO BANK",
    )
    return FileHeader(**(values | changes))


def batch_header(sec: str, service_class: int, **changes) -> BatchHeader:
    values = dict(
        service_class_code=service_class,
        company_name="TX Demo Bank",
        company_identification="1234567890",
        standard_entry_class_code=sec,
        company_entry_description="PAYMENT",
        effective_entry_date=datetime.date(2026, 3, 6),
        odfi_identification=ODFI,
    )
    return BatchHeader(**(values | changes))


def entry(code: int, routing: str, amount: int, name: str = "", **changes) -> EntryDetail:
    values = dict(
        transaction_code=code,
        routing_number=routing,
        dfi_account_number="12345678",
        amount=amount,
        receiver_name=name,
        trace_number=f"{ODFI}0000000",  # numbered() gives the real one
    )
    return EntryDetail(**(values | changes))


def remittance(text: str) -> PaymentAddenda:
    return PaymentAddenda(payment_related_information=text, entry_detail_sequence_number="0000000")


def outbound_batches() -> list[Batch]:
    """PPD credits, debits and prenotes; a CCD credit batch with remittance; a WEB debit batch:
    numbered as the writer numbers them."""
    return numbered(
        [
            Batch(
                batch_header("PPD", 200, company_entry_description="PAYROLL"),
                (
                    Entry(entry(22, RDFI_A, 125000, "Jane Roe", identification_number="EMP-1")),
                    Entry(entry(27, RDFI_B, 7510, "John Doe"), (remittance("LOAN 42 MARCH"),)),
                    Entry(entry(33, RDFI_C, 0, "Prenote Savings")),
                    Entry(entry(28, RDFI_A, 0, "Prenote Checking")),
                ),
            ),
            Batch(
                batch_header("CCD", 220, company_entry_description="VENDOR PAY"),
                (
                    Entry(
                        entry(22, RDFI_B, 990000, "ACME SUPPLY CO"),
                        (remittance("INV 2026-0031 AND INV 2026-0032"),),
                    ),
                    Entry(entry(32, RDFI_C, 1, "ACME SAVINGS")),
                ),
            ),
            Batch(
                batch_header("WEB", 225, company_entry_description="PURCHASE"),
                (
                    Entry(entry(27, RDFI_A, 4999, "Ann Lee", discretionary_data="S")),
                    Entry(entry(37, RDFI_B, 1500, "Bo Chen", discretionary_data="R")),
                ),
            ),
        ],
        first_trace_sequence=41,
    )


def outbound_file(**changes) -> bytes:
    return write_file(file_header(), outbound_batches(), **changes)
