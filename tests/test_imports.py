"""The import graph of the first-party code, and the layers it must respect
(docs/architecture.md; docs/events.md for events and webhooks).

Every module is parsed with `ast` (imports inside functions too: a lazy import is still a
dependency), so the rules hold however an import is written. `module_imports()` is the graph of
modules, `app_edges()` the graph of apps (top-level packages) drawn from it. The rules: every
app has its place in `LAYERS`; every import points down the layers (an app imports only apps
below it); no cycle among apps and none among modules (no two modules import each other,
directly or through others). Inside an app, the domain's modules import nothing from the wire
(`api`, views and serializers, urls, admin) and a selector imports no service ("The line inside
an app"). The back office owns the staff surface: no domain app has an admin module, and no staff
write happens outside the declarations of `backoffice.actions` ("One staff surface").
"""

import ast
import re
from collections import defaultdict
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
SKIPPED = {"tests", "bench", "scripts", "config", ".venv", ".data", "docs", "openapi"}

# The layers, bottom to top: each app imports only apps before it in this list (docs/architecture.md
# draws the same list; `config/`, which assembles the URLs, and the tests stand outside).
LAYERS = [
    "core",
    "institutions",
    "api",
    "events",
    "customers",
    "accounts",
    "cards",
    "monitoring",
    "transactions",
    "transfers",
    "decisioning",
    "authorizations",
    "disputes",
    "interest",
    "payments",
    "reconciliation",
    "jobs",
    "webhooks",
    "sandbox",
    "backoffice",
]


def first_party_apps() -> set[str]:
    """Top-level packages of the project (a folder with an `__init__.py`)."""
    return {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name not in SKIPPED and not path.parent.name.startswith(".")
    }


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Absolute names of every module `module` imports, anywhere in it."""
    names = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.add(target)
            # `from package import module` imports that module too.
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def module_imports() -> dict[str, set[str]]:
    """First-party module -> the first-party names it imports (migrations left out)."""
    apps = first_party_apps()
    graph = {}
    for app in apps:
        for path in (ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            module = _module_name(path)
            tree = ast.parse(path.read_text(), filename=str(path))
            imported = _imported(tree, module, path.name == "__init__.py")
            graph[module] = {name for name in imported if name.split(".")[0] in apps}
    return graph


def app_edges() -> dict[str, set[str]]:
    """App -> the other apps it imports (an app is a top-level package)."""
    edges = defaultdict(set)
    for module, imported in module_imports().items():
        app = module.split(".")[0]
        edges[app].update(name.split(".")[0] for name in imported if name.split(".")[0] != app)
    return dict(edges)


def test_the_graph_is_found():
    edges = app_edges()
    assert {"events", "webhooks", "api", "cards"} <= first_party_apps()
    assert "events" in edges["webhooks"]  # the webhooks subscribe to events


def test_events_know_nothing_of_webhooks():
    offenders = sorted(
        f"{module} imports {name}"
        for module, imported in module_imports().items()
        if module.split(".")[0] == "events"
        for name in imported
        if name.split(".")[0] == "webhooks"
    )
    assert offenders == []


def cycles_among(edges: dict[str, set[str]], apps: set[str]) -> list[list[str]]:
    """The import cycles of the graph restricted to `apps` (each as a path back to its start)."""
    found = []

    def walk(path):
        for nxt in sorted(edges.get(path[-1], set()) & apps):
            if nxt == path[0]:
                found.append([*path, nxt])
            elif nxt not in path:
                walk([*path, nxt])

    for app in sorted(apps):
        walk([app])
    return found


def test_no_import_cycle_between_events_and_webhooks():
    # Between the two apps themselves (every longer loop: test_no_import_cycle_between_apps).
    assert cycles_among(app_edges(), {"events", "webhooks"}) == []
    # The helper does find a cycle when there is one.
    assert cycles_among({"a": {"b"}, "b": {"a"}}, {"a", "b"}) == [["a", "b", "a"], ["b", "a", "b"]]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of `graph`: its strongly connected components of more than one node (Tarjan,
    iterative), each sorted. Edges to names that are not nodes of the graph are ignored."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_every_app_has_its_layer():
    # A new app fails here until it is placed in LAYERS (and in docs/architecture.md).
    assert sorted(first_party_apps() - set(LAYERS)) == []
    assert sorted(set(LAYERS) - first_party_apps()) == []
    assert len(set(LAYERS)) == len(LAYERS)


def test_the_docs_draw_the_same_layers():
    text = (ROOT / "docs" / "architecture.md").read_text()
    drawing = text.split("```text\n", 1)[1].split("```", 1)[0]
    # Each layer is a row of the drawing that starts `| app `, top to bottom.
    rows = [
        row[1] for row in (re.match(r"\| (\w+) ", line) for line in drawing.splitlines()) if row
    ]
    assert rows == LAYERS[::-1]


def test_imports_point_down_the_layers():
    rank = {app: position for position, app in enumerate(LAYERS)}
    offenders = sorted(
        f"{module} imports {name}: {module.split('.')[0]} is below {name.split('.')[0]}"
        for module, imported in module_imports().items()
        for name in imported
        if rank.get(name.split(".")[0], -1) > rank.get(module.split(".")[0], len(LAYERS))
    )
    assert offenders == []


def test_no_import_cycle_between_apps():
    assert strongly_connected(app_edges()) == []


def test_no_import_cycle_between_modules():
    graph = module_imports()
    # `from package import name` is recorded as `package` and `package.name`; only the names
    # that are modules are nodes.
    modules = {
        module: {name for name in imported if name in graph} for module, imported in graph.items()
    }
    cycles = strongly_connected(modules)
    assert [
        [
            f"{module} imports {name}"
            for module in cycle
            for name in sorted(modules[module])
            if name in cycle
        ]
        for cycle in cycles
    ] == []


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c", "x"}, "c": {"a"}, "d": {"d2"}, "d2": {"d"}, "e": {"a"}}
    assert strongly_connected(graph) == [["a", "b", "c"], ["d", "d2"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


# The line inside an app (docs/architecture.md, "The line inside an app"): the domain on one
# side, the wire (the API's names, formats and representations) and the entry points on the
# other. The domain apps; every app above `api` is one of them or says why it is not.
DOMAIN_APPS = {
    "events",
    "customers",
    "accounts",
    "cards",
    "monitoring",
    "transactions",
    "transfers",
    "decisioning",
    "authorizations",
    "disputes",
    "interest",
    "payments",
    "reconciliation",
    "jobs",
    "webhooks",
}
NOT_DOMAIN_APPS = {
    "sandbox": "demo data for a development machine, made through the domain's services",
    "backoffice": "the staff's admin (pages, forms, work queues): a wire of its own",
}
# Modules named for their role: in every app, its views and serializers (`apis.py` or `apis/`),
# its `urls.py` and `admin.py` are the wire, and so is all of `api`.
WIRE_ROLES = {"apis", "urls", "admin"}
# Entry points: they call the domain as views do, and may use the wire. `apps.py` wires the apps
# together when Django starts; `tasks.py` holds the worker's jobs (thin calls of services: the
# `jobs` ones also purge the API layer's own tables); management commands parse, call, print.
ENTRY_ROLES = {"apps", "tasks", "management"}
# Wire modules whose name does not say it.
WIRE_MODULES = {
    # The event's representation (a DRF serializer): the body of GET /events/{id} and of every
    # webhook delivery (docs/events.md).
    "events.payloads",
    # The statement endpoints (accounts.statement_lines.periods rendered): their views, the JSON
    # document, the cursor of its next page, the CSV and the PDF.
    "transactions.statement_views",
    "transactions.statement_serializers",
    "transactions.statement_cursor",
    "transactions.statement_csv",
    "transactions.statement_pdf",
    # What TX POSTs to a program's decisioning endpoint, in the API's names (docs/decisioning.md).
    "decisioning.payloads",
}
# The domain's imports of the wire, each with its reason. Keep it short.
WIRE_IMPORTS_ALLOWED = {
    # A delivery POSTs the event as GET /events/{id} shows it: one representation, rendered
    # where it is sent (docs/events.md).
    ("webhooks.services.deliveries", "events.payloads"),
    # A call of a decisioning endpoint POSTs the body the program reads, rendered where it is
    # sent (docs/decisioning.md), as a delivery does.
    ("decisioning.services", "decisioning.payloads"),
}


def is_wire(name: str) -> bool:
    """Whether a module (or a name imported from one) is on the wire."""
    parts = name.split(".")
    return (
        parts[0] == "api"
        or bool(set(parts[1:]) & WIRE_ROLES)
        or any(name == module or name.startswith(f"{module}.") for module in WIRE_MODULES)
    )


def is_domain(module: str) -> bool:
    parts = module.split(".")
    return parts[0] in DOMAIN_APPS and not is_wire(module) and not set(parts[1:]) & ENTRY_ROLES


def wire_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of the wire by a module of the domain, but the allowed ones."""
    return sorted(
        f"{module} imports {name}"
        for module, imported in graph.items()
        if is_domain(module)
        for name in imported
        if is_wire(name)
        and not any(
            module == allowed and (name == wire or name.startswith(f"{wire}."))
            for allowed, wire in WIRE_IMPORTS_ALLOWED
        )
    )


def services_in_selectors(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a service module by a selector module: a selector only reads."""
    return sorted(
        f"{module} imports {name}"
        for module, imported in graph.items()
        if "selectors" in module.split(".")
        for name in imported
        if "services" in name.split(".")
    )


def test_every_app_above_the_api_is_domain_or_says_why_not():
    above = set(LAYERS[LAYERS.index("api") + 1 :])
    assert DOMAIN_APPS.isdisjoint(NOT_DOMAIN_APPS)
    assert above == DOMAIN_APPS | set(NOT_DOMAIN_APPS)


def test_the_named_wire_modules_exist():
    # A module renamed or moved must leave these lists, not linger in them.
    graph = module_imports()
    assert sorted(WIRE_MODULES - set(graph)) == []
    assert sorted({module for module, _ in WIRE_IMPORTS_ALLOWED} - set(graph)) == []


def test_the_domain_speaks_no_wire():
    assert wire_imports(module_imports()) == []


def test_a_selector_imports_no_service():
    assert services_in_selectors(module_imports()) == []


def test_the_line_is_found():
    graph = {
        "accounts.services.holds": {"api.context", "api.context.iso_millis", "core.timestamps"},
        "accounts.services.products": {"cards.apis.serializers.PanField"},
        "cards.selectors": {"cards.services.pan_guard", "cards.models"},
        "cards.apis.cards": {"api.views.TXView", "cards.services"},
        "cards.admin": {"api.names"},
        "jobs.tasks": {"api.idempotency"},
        "cards.management.commands.renew": {"api.serializers"},
        "events.services": {"events.payloads.event_payload"},
        "webhooks.services.deliveries": {"events.payloads.event_payload"},
        "webhooks.services.endpoints": {"events.payloads"},
        "sandbox.seed": {"api.serializers"},
    }
    assert wire_imports(graph) == [
        "accounts.services.holds imports api.context",
        "accounts.services.holds imports api.context.iso_millis",
        "accounts.services.products imports cards.apis.serializers.PanField",
        "events.services imports events.payloads.event_payload",
        "webhooks.services.endpoints imports events.payloads",
    ]
    assert services_in_selectors(graph) == ["cards.selectors imports cards.services.pan_guard"]


# The domain keys what it stores, emits and raises in its own names (docs/api-contract.md,
# "Names"): a camelCase key in a dict it builds is an API name in the domain, the drift a
# second name table allows. The allowed ones, each with its reason. Keep it short.
CAMEL_KEY = re.compile(r"\A[a-z]+[A-Z][A-Za-z0-9]*\Z")
CAMEL_KEYS_ALLOWED = {
    # The worker's structured log lines name their fields as the access log does (`tranId`,
    # `apiKeyId`: docs/operations.md); a log is not the API.
    ("jobs.services", "jobId"),
}


def camel_keys(module: str, tree: ast.AST) -> set[str]:
    """The camelCase string keys of the dicts `module` builds: `{"accountId": ...}` and
    `data["accountId"] = ...`."""
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            candidates = node.keys
        elif isinstance(node, ast.Assign):
            candidates = [t.slice for t in node.targets if isinstance(t, ast.Subscript)]
        else:
            continue
        keys.update(
            key.value
            for key in candidates
            if isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and CAMEL_KEY.match(key.value)
        )
    return keys


def domain_camel_keys(allowed=CAMEL_KEYS_ALLOWED) -> list[str]:
    found = []
    for app in DOMAIN_APPS:
        for path in (ROOT / app).rglob("*.py"):
            module = _module_name(path)
            if "migrations" in path.parts or not is_domain(module):
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            found += [
                f"{module}: {key}"
                for key in sorted(camel_keys(module, tree))
                if (module, key) not in allowed
            ]
    return sorted(found)


def test_the_domain_keys_its_data_in_its_own_names():
    assert domain_camel_keys() == []
    # An allowed key the domain no longer builds leaves the list.
    assert domain_camel_keys(allowed=set()) == [
        f"{module}: {key}" for module, key in sorted(CAMEL_KEYS_ALLOWED)
    ]


def test_camel_keys_are_found():
    tree = ast.parse('data = {"account_id": 1, "cardId": 2}\ndata["holdId"] = 3\nx = data["keyId"]')
    assert camel_keys("m", tree) == {"cardId", "holdId"}


# --- One staff surface (docs/back-office.md, "Where it lives" and "Staff actions") --------------
# The back office owns every staff page: no domain app keeps an admin module or admin template,
# and every staff write is a declaration of `backoffice.actions` (an action on selected rows, a
# `StaffAction`; a form's write, a `FormWrite`).
STAFF_SURFACE = "backoffice"
ACTIONS_PACKAGE = "backoffice.actions"
# The ModelAdmin methods through which Django's admin writes rows: defined only by the declared
# writes' base (backoffice.actions.forms.DeclaredForms), never by a page.
WRITER_METHODS = {"save_model", "save_related", "save_formset", "delete_model", "delete_queryset"}
# What the pages (`backoffice.admin`, `backoffice.kit`) take from the services: reads, checks and
# names, never a write. Each with its reason. Keep it short.
PAGE_SERVICE_IMPORTS = {
    # A form shows the services' rules field by field before anything is saved.
    "accounts.services.products.account_product_errors",
    "cards.services.products.card_product_errors",
    "customers.services.customer_field_error",
    "institutions.services.normalize_cidr",
    "institutions.services.validate_currency",
    "institutions.services.validate_scopes",
    "institutions.services.validate_time_zone",
    "institutions.services.validate_weekend_days",
    # The fields of a card product's form are the service's.
    "cards.services.products.LIMIT_FIELDS",
    "cards.services.products.SWITCH_FIELDS",
    # A card's page shows what its limits are checked against (a read of its spending).
    "cards.services.card_usage",
    # A threshold's page shows no daily total for the kinds that have none.
    "backoffice.services.thresholds.UNSUMMED",
    # A statement's and a network settlement's page show their proof (a read of the ledger).
    "reconciliation.services.proof.statement_proof",
    "reconciliation.services.settlement_matching.settlement_proof",
}


def admin_modules_outside_the_back_office() -> list[str]:
    """Every `<app>/admin.py`, `<app>/admin/` and `<app>/templates/admin/` of an app other
    than the back office."""
    found = []
    for app in sorted(first_party_apps() - {STAFF_SURFACE}):
        for name in ("admin.py", "admin", "templates/admin"):
            if (ROOT / app / name).exists():
                found.append(f"{app}/{name}")
    return found


def test_no_domain_app_has_an_admin_module():
    assert admin_modules_outside_the_back_office() == []


def _modules():
    for app in sorted(first_party_apps()):
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield _module_name(path), ast.parse(path.read_text(), filename=str(path))


def _is_admin_action(decorator: ast.expr) -> bool:
    """`@admin.action`, `@admin.action(...)` or `@action(...)` (django.contrib.admin's)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "action") or (
        isinstance(target, ast.Name) and target.id == "action"
    )


def staff_writes_outside_the_declarations(modules) -> list[str]:
    """What writes for staff outside `backoffice.actions`: an admin action defined with Django's
    decorator (every action is a declared `StaffAction`), a writer method of a ModelAdmin, an
    admin's `actions` naming anything but a declaration imported from `backoffice.actions` (a
    string names a method of the admin), and a page importing a service beyond
    PAGE_SERVICE_IMPORTS."""
    found = []
    for module, tree in modules:
        declared = module == ACTIONS_PACKAGE or module.startswith(f"{ACTIONS_PACKAGE}.")
        imported_from_actions = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ACTIONS_PACKAGE)
            for alias in node.names
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if any(_is_admin_action(d) for d in node.decorator_list):
                    found.append(f"{module}.{node.name}: an admin action not declared")
                if node.name in WRITER_METHODS and not declared:
                    found.append(f"{module}.{node.name}: a writer outside {ACTIONS_PACKAGE}")
            elif isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if not (
                        isinstance(statement, ast.Assign)
                        and any(getattr(t, "id", None) == "actions" for t in statement.targets)
                        and isinstance(statement.value, ast.List | ast.Tuple)
                    ):
                        continue
                    for element in statement.value.elts:
                        name = element.id if isinstance(element, ast.Name) else None
                        if name not in imported_from_actions:
                            found.append(
                                f"{module}.{node.name}.actions: {ast.unparse(element)} is not "
                                f"a declaration of {ACTIONS_PACKAGE}"
                            )
            elif isinstance(node, ast.ImportFrom) and _is_page(module):
                source = node.module or ""
                if "services" in source.split("."):
                    found += [
                        f"{module} imports {source}.{alias.name}"
                        for alias in node.names
                        if f"{source}.{alias.name}" not in PAGE_SERVICE_IMPORTS
                    ]
    return sorted(found)


def _is_page(module: str) -> bool:
    return module == f"{STAFF_SURFACE}.kit" or module.startswith(f"{STAFF_SURFACE}.admin")


def test_no_staff_write_outside_the_declared_actions():
    assert staff_writes_outside_the_declarations(_modules()) == []


def test_the_page_service_imports_are_used():
    # A name the pages no longer take leaves the list.
    taken = {
        f"{node.module}.{alias.name}"
        for module, tree in _modules()
        if _is_page(module)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and "services" in (node.module or "").split(".")
        for alias in node.names
    }
    assert sorted(PAGE_SERVICE_IMPORTS - taken) == []


def test_staff_writes_are_found():
    source = """
from django.contrib import admin
from backoffice.actions.cards import suspend_cards
from cards.services import card_set_status, card_usage

class CardAdmin(admin.ModelAdmin):
    actions = [suspend_cards, "close_cards", some_function]

    @admin.action(description="Close")
    def close_cards(self, request, queryset):
        pass

    def save_model(self, request, obj, form, change):
        pass
"""
    tree = ast.parse(source)
    assert staff_writes_outside_the_declarations([("backoffice.admin.cards", tree)]) == [
        "backoffice.admin.cards imports cards.services.card_set_status",
        "backoffice.admin.cards.CardAdmin.actions: 'close_cards' is not a declaration of "
        "backoffice.actions",
        "backoffice.admin.cards.CardAdmin.actions: some_function is not a declaration of "
        "backoffice.actions",
        "backoffice.admin.cards.close_cards: an admin action not declared",
        "backoffice.admin.cards.save_model: a writer outside backoffice.actions",
    ]
    # The declarations' own module may define the writers, never an admin action.
    assert staff_writes_outside_the_declarations([("backoffice.actions.forms", tree)]) == [
        "backoffice.actions.forms.CardAdmin.actions: 'close_cards' is not a declaration of "
        "backoffice.actions",
        "backoffice.actions.forms.CardAdmin.actions: some_function is not a declaration of "
        "backoffice.actions",
        "backoffice.actions.forms.close_cards: an admin action not declared",
    ]


def test_every_registered_staff_write_is_declared():
    """What Django's admin really offers (the registry, for a superuser): every action of an
    admin of ours is a `StaffAction` of `backoffice.actions`, and every form of ours that can
    add, change or delete a row does it through a declared `FormWrite`."""
    from django.contrib import admin
    from django.contrib.auth.models import User
    from django.test import RequestFactory

    from backoffice.actions.base import StaffAction
    from backoffice.actions.forms import DeclaredForms

    request = RequestFactory().get("/admin/")
    request.user = User(username="root", is_superuser=True, is_staff=True, is_active=True)
    ours = {
        model: model_admin
        for model, model_admin in admin.site._registry.items()
        if model._meta.app_label in first_party_apps()  # not Django's, axes's, procrastinate's
    }
    declared, undeclared = [], []
    for model, model_admin in ours.items():
        label = model._meta.label_lower
        for name, (function, _name, _label) in model_admin.get_actions(request).items():
            if isinstance(function, StaffAction) and function.model is model:
                declared.append(f"{label}: action {name}")
            else:
                undeclared.append(f"{label}: action {name}")
        allowed = {
            "add": model_admin.has_add_permission(request),
            "change": model_admin.has_change_permission(request, model()),
            "delete": model_admin.has_delete_permission(request, model()),
        }
        for page, writes in allowed.items():
            write = getattr(model_admin, f"{page}_write", None)
            if not writes:
                continue
            if (
                isinstance(model_admin, DeclaredForms)
                and write is not None
                and write.model is model
            ):
                declared.append(f"{label}: {page} form")
            else:
                undeclared.append(f"{label}: {page} form")
    assert undeclared == []
    assert {"cards.card: action unblock_pins", "institutions.apikey: change form"} <= set(declared)
