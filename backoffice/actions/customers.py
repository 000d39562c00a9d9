"""What staff do to customers: correct their details (docs/back-office.md, "The customer
page"), through `customer_update`, so `customer.updated` is emitted as for the API."""

from backoffice.actions.forms import FormWrite
from customers.models import Customer
from customers.services import customer_update

change_customer = FormWrite(
    page="change form: their details (`?edit=1` on their page)",
    model=Customer,
    service=customer_update,
    arguments=lambda saving: {"customer": saving.obj, "changes": saving.form.changes()},
    # The page goes back to the customer; only the row's time of change is needed of it.
    then=lambda saving, outcome: setattr(saving.obj, "updated_at", outcome.value.updated_at),
)
