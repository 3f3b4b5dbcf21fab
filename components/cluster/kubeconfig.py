"""An AKS user kubeconfig (listClusterUserCredential's) made to sign in without a prompt: pure,
so the clusters, the plan's read and the proof's watch convert it the same way."""

from __future__ import annotations

import base64

import yaml

# PyYAML's safe loader and dumper, in C (libyaml) where PyYAML was built with it.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def entra_kubeconfig(kubeconfig: str) -> str:
    """The kubelogin exec plugin AKS returns signs in with `--login devicecode`, which waits for
    a human; `--login azurecli` reuses the `az login` session, as `kubelogin convert-kubeconfig
    -l azurecli` does (Azure/kubelogin docs). The server ID is kept."""
    config = yaml.load(kubeconfig, Loader=_YAML_LOADER)
    for user in config.get("users") or []:
        exec_ = (user.get("user") or {}).get("exec")
        if not exec_:
            continue
        args = exec_.get("args") or []
        server_id = args[args.index("--server-id") + 1] if "--server-id" in args else None
        exec_["args"] = ["get-token", "--login", "azurecli"] + (["--server-id", server_id] if server_id else [])
        # An exec plugin's `env` overrides the caller's environment (client.authentication.k8s.io
        # ExecConfig), and kubelogin prefers AAD_LOGIN_METHOD over `--login` (Azure/kubelogin
        # options.go UpdateFromEnv): drop it, so the environment of whoever runs the program
        # decides (the workflows set `workloadidentity`, see .github/workflows/pr.yml).
        env = [e for e in exec_.get("env") or [] if e.get("name") != "AAD_LOGIN_METHOD"]
        exec_["env"] = env or None
    return yaml.dump(config, Dumper=_YAML_DUMPER, sort_keys=False)


def provider_kubeconfig(user_kubeconfig: str) -> str:
    """listClusterUserCredential's kubeconfig (base64) decoded, an Entra ID cluster's made to sign
    in without a prompt (a local-accounts cluster's passes unchanged)."""
    return entra_kubeconfig(base64.b64decode(user_kubeconfig).decode("utf-8"))
