"""A read of Azure or of the cluster that fails is said as "not checked" (or the read's one-line
refusal), whatever failed: Azure's answer, the network, a deadline, a failed invoke, an answer
no API documents. A bug of the program's own, raised while a read's answer is handled, is no
such thing: it surfaces as itself, not as an outage of Azure (components/seam/reader.py
`read_errors`)."""

from __future__ import annotations

import urllib.error
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from azure.core.exceptions import (
    ClientAuthenticationError,
    DeserializationError,
    HttpResponseError,
    ResourceNotFoundError,
    ServiceRequestError,
)
from support.config import parsed

from components.cluster import cluster_facts
from components.cost import cost
from components.errors import AzureReadError, ClusterAccessError, error_line, one_line
from components.gpu_stack import cluster_object_checks
from components.live_reader import LiveReader
from components.ownership import stack_state
from components.plan import billed
from components.pools import managed_pool_checks, pool_modes
from components.preflight import preflight
from components.seam import invoke_deadline
from components.seam.reader import BadAnswer, InvokeFailed, NotRead, read_errors

T4 = "Standard_NC4as_T4_v3"


class Failing:
    """A reader each of whose reads raises `error`."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __getattr__(self, read: str) -> Callable[..., Any]:
        def failed(*args: Any, **kwargs: Any) -> Any:
            raise self.error

        return failed


def said(read: Callable[[Failing], Any], reader: Failing) -> str:
    """What the program says of the read: the "not checked" text it returns, or the one line
    it raises (a read the run cannot go without)."""
    try:
        return str(read(reader))
    except AzureReadError as error:
        return str(error)


CFG = parsed(gpuPool={"vmSize": T4}, **{"azure-native__subscriptionId": "sub-1"})
WITH_BUDGET = parsed(gpuPool={"vmSize": T4}, cost={"budget": {"amount": 500, "contactEmails": ["gpu-team@example.com"]}})
MANAGED = parsed(gpuPool={"vmSize": T4, "management": "aks-managed"}, **{"azure-native__subscriptionId": "sub-1"})

# Every place a read's failure is caught, as the program makes the read.
READS: dict[str, Callable[[Failing], Any]] = {
    "VM sizes and quota": lambda r: preflight.load_facts(CFG.preflight, r, "eastus", "MC_rg_aks_eastus", lambda: "sub-1")[1],
    "the budget's permission": lambda r: preflight.budget_permission(WITH_BUDGET.cost.budget, r, lambda: r.permissions("sub-1"))[1],
    "the destroy's permissions": lambda r: preflight.destroy_permission(
        preflight.destroy_needs(True, WITH_BUDGET.access),
        WITH_BUDGET.resource_group_name,
        r,
        lambda: r.permissions("sub-1"),
        lambda: "sub-1",
    )[1],
    "prices": lambda r: cost.load(billed(CFG), "eastus", r)[1],
    "the pools' management": lambda r: pool_modes.check(CFG.pools, "rg", "aks", lambda: "sub-1", r).failed,
    "what the cluster runs": lambda r: cluster_object_checks.read(r, "kubeconfig")[1],
    "the stack's state": lambda r: stack_state.read(r, project="aks-gpu", stack="dev").why,
    "the existing cluster": lambda r: cluster_facts.read(r, "rg", "aks"),
    "its user credential": lambda r: cluster_facts.read_user_kubeconfig(r, "rg", "aks"),
    "the preview feature": lambda r: managed_pool_checks.feature_registration(MANAGED.pools, r)[0].message,
}

# What a read raises when Azure or the cluster cannot be read, as the live reader raises it.
FAILURES = {
    "Azure's refusal": HttpResponseError(message="(AuthorizationFailed) The client may not read it"),
    "not there": ResourceNotFoundError(message="(ResourceNotFound) The Resource was not found"),
    "no sign-in": ClientAuthenticationError(message="DefaultAzureCredential failed to retrieve a token"),
    "no connection": ServiceRequestError(message="Connection refused"),
    "an answer the SDK's models cannot hold": DeserializationError("Unable to deserialize to object: type"),
    "urllib's": urllib.error.URLError("Name or service not known"),
    "a socket's": ConnectionResetError(104, "Connection reset by peer"),
    "a deadline": TimeoutError("Azure did not answer within 30 s"),
    "a failed invoke": InvokeFailed("invoke of azure-native:containerservice:getManagedCluster failed: 403 AuthorizationFailed"),
    "an answer no API documents": BadAnswer("the Retail Prices API answered something other than a page of Items"),
    "the cluster's refusal": ClusterAccessError("the cluster answered HTTP 403 Forbidden to GET /api/v1/namespaces"),
}

# Bugs of the program's own, raised inside a read's handling.
BUGS = {
    "KeyError": KeyError("properties"),
    "TypeError": TypeError("'NoneType' object is not subscriptable"),
    "AttributeError": AttributeError("x"),
}


@pytest.mark.parametrize("failure", FAILURES.values(), ids=FAILURES.keys())
@pytest.mark.parametrize("read", READS.values(), ids=READS.keys())
def test_a_read_that_fails_is_said_in_one_line_and_not_raised(read, failure):
    message = said(read, Failing(failure))
    assert message and "\n" not in message
    assert "Traceback" not in message


@pytest.mark.parametrize("bug", BUGS.values(), ids=BUGS.keys())
@pytest.mark.parametrize("read", READS.values(), ids=READS.keys())
def test_a_bug_of_the_programs_own_inside_a_read_surfaces_as_itself(read, bug):
    with pytest.raises(type(bug)) as raised:
        said(read, Failing(bug))
    assert raised.value is bug, "not wrapped, not said as Azure's"


def test_a_bug_in_parsing_an_answer_is_not_reported_as_unread_pools():
    """The pools' management read answers, and parsing it fails: a KeyError, not "the plan is
    not known" with the error's words as if Azure had said them."""

    class Answers:
        def pool_modes(self, *args: Any) -> Any:
            return {"gpu": {}["mode"]}

    with pytest.raises(KeyError):
        pool_modes.check(CFG.pools, "rg", "aks", lambda: "sub-1", Answers())


def test_every_read_error_is_a_read_error_and_no_bug_is():
    errors = read_errors()
    assert all(isinstance(failure, errors) for failure in FAILURES.values())
    assert isinstance(NotRead("offline"), errors)
    assert not any(isinstance(bug, errors) for bug in BUGS.values())
    assert not isinstance(ValueError("a parser's"), errors), "only an answer's ValueError is a read's (BadAnswer)"


def test_a_failed_invoke_is_invoke_failed_with_the_sdks_words_and_any_other_error_is_itself():
    """pulumi.runtime.invoke raises a bare Exception("invoke of <token> failed: ...")
    (pulumi/runtime/invoke.py `_invoke`); nothing else is renamed."""

    def failed_invoke() -> None:
        raise Exception("invoke of azure-native:authorization:getClientConfig failed: no sign-in")

    with pytest.raises(InvokeFailed, match=r"^invoke of azure-native:authorization:getClientConfig failed: no sign-in$"):
        invoke_deadline.typed(failed_invoke)
    with pytest.raises(KeyError):
        invoke_deadline.typed(lambda: {}["kubeconfigs"])
    with pytest.raises(InvokeFailed):
        invoke_deadline.within(failed_invoke, "getManagedCluster", 10)


class Credential:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def get_token(self, *scopes: str) -> Any:
        raise self.error


def test_no_token_is_the_sign_in_problem_and_a_bug_in_getting_one_surfaces():
    reader = LiveReader()
    reader.__dict__["credential"] = Credential(ClientAuthenticationError(message="DefaultAzureCredential failed:\n  no az login"))
    assert reader.sign_in_problem() == "ClientAuthenticationError: DefaultAzureCredential failed: no az login"
    reader.__dict__["credential"] = Credential(TypeError("get_token() missing 1 required positional argument"))
    with pytest.raises(TypeError):
        reader.sign_in_problem()


def test_the_stacks_state_unread_is_not_read_and_a_bug_reading_it_surfaces(monkeypatch):
    """The live reader's state read: a failed invoke or its deadline is NotRead, in one line."""
    reader = LiveReader(state_seconds=5)
    for failure, surfaces in ((InvokeFailed("invoke of pulumi:pulumi:readStackOutputs failed:\n 503"), False), (KeyError("x"), True)):

        def within(call: Any, what: str, seconds: float, failure: BaseException = failure) -> Any:
            raise failure

        monkeypatch.setattr(invoke_deadline, "within", within)
        monkeypatch.setattr(pulumi, "get_organization", lambda: "org")
        monkeypatch.setattr(pulumi, "get_project", lambda: "aks-gpu")
        monkeypatch.setattr(pulumi, "get_stack", lambda: "dev")
        if surfaces:
            with pytest.raises(KeyError):
                reader.stack_resources()
        else:
            with pytest.raises(
                NotRead, match=r"^the stack's state could not be read: invoke of pulumi:pulumi:readStackOutputs failed: 503$"
            ):
                reader.stack_resources()


def test_an_error_is_quoted_on_one_line_cut_at_300_characters_with_its_type():
    long = RuntimeError("Service Unavailable\n" + "x" * 500)
    assert error_line(long) == f"RuntimeError: {one_line(long)}" and len(one_line(long)) == 300
    assert error_line(TimeoutError()) == "TimeoutError: TimeoutError", "an error that says nothing is named"
    assert one_line("a\n  b\tc", None) == "a b c"


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_a_bug_while_reading_what_the_cluster_runs_stops_the_run_as_itself(preview):
    """The whole program, as `pulumi preview` and `pulumi up` run it: no warning that the
    cluster was not checked, and nothing registered after the read."""
    from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
    from tools.mock_engine import RecordingMonitor, run_program

    def buggy(kubeconfig: str) -> Any:
        return {"items": [{}]}["kinds"]

    monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(cluster=existing_cluster(), kubernetes=buggy)))
    existing = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}, "gpuPool": {"vmSize": T4}}
    with pytest.raises(KeyError, match="kinds"):
        run_program("dev", overrides=existing, monitor=monitor, preview=preview)
    assert monitor.registrations == [], "stopped before anything was registered"


def test_an_environment_that_names_no_credential_is_a_sign_in_problem_not_a_traceback(monkeypatch):
    """azure-identity refuses an AZURE_TOKEN_CREDENTIALS it does not know with a ValueError
    when the credential is built (azure-identity 1.27.0 _internal/utils.py
    `process_credential_exclusions`): that is the environment's, said as no sign-in."""
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "NoSuchCredential")
    said = LiveReader().sign_in_problem()
    assert said is not None and said.startswith(
        "ClientAuthenticationError: DefaultAzureCredential: Invalid value for AZURE_TOKEN_CREDENTIALS"
    )


@pytest.mark.parametrize(
    "kubeconfig, said",
    [("{not: [yaml", "the kubeconfig is not YAML"), ("- a list", "the kubeconfig is not a mapping")],
    ids=["not YAML", "not a mapping"],
)
def test_a_kubeconfig_azure_gave_that_cannot_be_read_is_the_clusters_refusal_not_a_traceback(kubeconfig, said):
    """The kubeconfig is AKS's answer (listClusterUserCredential): what cannot be read of it
    is a read that failed, which the checks say was not made."""
    from components.cluster import cluster_access

    with pytest.raises(ClusterAccessError, match=f"^{said}"):
        cluster_access.connect(kubeconfig)
