"""The program table: programs judged by prefix rules, as data (the engine is :mod:`._table`).

Each entry names its programs once (the analyser's table of programs, :mod:`._programs`,
is derived from these names) and says how to read their command line and what to find
in it:

``names``
    the programs the entry judges.
``values``
    options that take a value (``kubectl -n prod delete``: ``prod`` is not the verb);
    a dict gives each program its own.
``longs``
    long options the program accepts abbreviated (GNU ``getopt_long``: ``--he`` is
    ``--help`` when no other option starts so); the reader spells them out.
``safe_with``
    options that make the command only print (``--help``): known read-only, no rule.
``inert`` / ``inert_unless``
    options that make the command change nothing (``--dry-run``), unless one of the
    second list is given too (``--dry-run=none``): no rule applies.
``writes``
    options whose value is a path the program writes (judged like a redirection;
    ``chdir`` names the option that moves the program's folder first).
``stdin_words``
    the words of a known stdin (a heredoc, ``echo ... |``) are operands too (redis-cli
    reads its commands there).
``rules``
    prefix rules, the first that fits gives its finding (below).
``read_only``
    prefixes of the operands that only read (a string is a one-word prefix).
``rest``
    ``module.function`` of a hand-written part for what no rule covers (a flow of
    secrets to a bucket); it returns ``None`` when it has nothing to say.

A rule (like Codex's execpolicy ``prefix_rule``): ``prefix`` is a token prefix of the
operands (the words that are not options or their values); each position is a word or
a tuple of alternatives, where ``*`` is any word, ``x*`` a word starting with ``x``,
``*x`` one ending with ``x``, ``!x`` any word but ``x``; words compare lowercased, and a
word of comma-separated parts fits when one part does (``kubectl delete pod,ns x``).
``also`` lists more prefixes, any of which may fit instead; ``anywhere`` needs one
operand (not only a prefix) to fit one of its patterns. ``with`` needs one of these
words among the arguments, ``without`` none of them (options compare exactly, ``x*`` as
a prefix; other words lowercased). ``programs`` limits a rule to some of the entry's
names. ``id`` is the
built-in rule of the finding: its decision is the one ``data/policy_defaults.toml``
gives (written there only). ``reason`` is formatted with ``{name}`` (the program) and
``{0}``, ``{1}``, ... (the operands). ``then = "dashdash"`` also judges the command
after ``--`` (``kubectl exec pod -- rm -rf /``). ``match`` and ``not_match`` are command
lines the rule must and must not fit: they are its tests (``tests/test_shell_rules.py``).

Only literals here: the hook loads this module with the analyser's table of programs.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypedDict

    Position = str | tuple[str, ...]

    class _RuleKeys(TypedDict):
        id: str
        prefix: tuple[Position, ...]
        reason: str
        match: tuple[str, ...]
        not_match: tuple[str, ...]

    _With = TypedDict("_With", {"with": tuple[str, ...]}, total=False)  # a keyword

    class Rule(_RuleKeys, _With, total=False):
        also: tuple[tuple[Position, ...], ...]
        anywhere: tuple[str, ...]
        without: tuple[str, ...]
        programs: tuple[str, ...]
        then: str

    class _ProgramKeys(TypedDict):
        names: tuple[str, ...]
        rules: tuple[Rule, ...]

    class Program(_ProgramKeys, total=False):
        values: tuple[str, ...] | dict[str, tuple[str, ...]]
        longs: tuple[str, ...]
        safe_with: tuple[str, ...]
        inert: tuple[str, ...]
        inert_unless: tuple[str, ...]
        writes: tuple[str, ...]
        chdir: str
        stdin_words: bool
        read_only: tuple[str | tuple[Position, ...], ...]
        rest: str

#: kubectl, oc and helm: options that take a value
_K8S = (
    "-n", "--namespace", "--context", "--cluster", "--user", "--kubeconfig", "-s", "--server",
    "--token", "--as", "--as-group", "--as-uid", "-v", "--v", "--request-timeout",
    "--certificate-authority", "--client-certificate", "--client-key", "--cache-dir",
    "--tls-server-name", "--username", "--password", "--profile", "--profile-output",
    "--log-file", "-l", "--selector", "-o", "--output", "-f", "--filename", "-c",
    "--container", "--field-selector", "--sort-by", "--template", "--kube-context",
    "--kube-apiserver", "--kube-token", "--repository-config", "--registry-config",
    "--repository-cache", "--burst-limit", "--qps", "--kube-as-user", "--kube-as-group",
    "--kube-ca-file",
)
#: --dry-run, --what-if, --plan: nothing is changed
_DRY = ("--dry-run*", "--dryrun*", "--what-if*", "--plan")
_NOT_DRY = ("--dry-run=none", "--dry-run=false")
#: what a cluster runs on: deleting one of these tears the cluster's workloads down
_K8S_TEARDOWN = (
    "ns", "namespace", "namespaces", "pv", "persistentvolume", "persistentvolumes", "pvc",
    "persistentvolumeclaim", "persistentvolumeclaims", "crd", "crds",
    "customresourcedefinition", "customresourcedefinitions", "node", "nodes", "all",
)
_SYSTEMCTL_STOPS = ("stop", "disable", "mask", "kill", "poweroff", "reboot", "halt", "isolate",
                    "rescue", "emergency", "kexec", "suspend", "hibernate")
_SYSTEMCTL_INSTALLS = ("enable", "link", "preset", "add-wants", "add-requires", "edit",
                       "set-property", "revert")
_SYSTEMCTL_READS = ("status", "list-units", "list-timers", "show", "is-active", "is-enabled",
                    "cat")

_AWS_TEARDOWN = (
    "delete-stack", "delete-db-instance", "delete-db-cluster", "delete-table", "delete-bucket",
    "terminate-instances", "delete-cluster", "delete-repository", "delete-secret",
    "delete-file-system", "delete-volume", "delete-snapshot", "schedule-key-deletion",
    "delete-user", "delete-role", "delete-function", "delete-hosted-zone", "delete-queue",
    "delete-topic", "delete-log-group", "delete-backup-vault", "delete-domain",
)

#: hosting platforms: commands that delete an app, a site or a database
_PLATFORM_TEARDOWN = ("apps:destroy", "apps:delete", "pg:reset", "apps destroy", "destroy",
                      "sites:delete", "projects:delete", "database:remove", "pg:kill")
_PLATFORM_DELETES = ("delete", "rm", "remove", "destroy", "*:delete", "*:remove", "*:destroy",
                     "*:disable")

PROGRAMS: tuple[Program, ...] = (
    {
        "names": ("kubectl", "oc"),
        "values": _K8S,
        "inert": _DRY,
        "inert_unless": _NOT_DRY,
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("delete", _K8S_TEARDOWN),
                "reason": "{name} delete {1} tears down what a cluster runs",
                "match": ("kubectl delete ns prod", "kubectl --context prod delete pv,pvc x",
                          "oc -n prod delete Namespace prod"),
                "not_match": ("kubectl delete pod x", "kubectl get ns",
                              "kubectl delete ns prod --dry-run=client"),
            },
            {
                "id": "data.destroy",
                "prefix": ("delete",),
                "with": ("--all", "-A", "--all-namespaces"),
                "reason": "{name} delete {1} tears down what a cluster runs",
                "match": ("kubectl delete pods --all", "oc delete deploy -A"),
                "not_match": ("kubectl get pods --all-namespaces", "kubectl delete pod web"),
            },
            {
                "id": "infra.delete",
                "prefix": ("delete",),
                "reason": "{name} delete removes cluster resources",
                "match": ("kubectl -n prod delete deploy web", "oc delete pod x"),
                "not_match": ("kubectl get deploy", "kubectl delete pod x --dry-run=server"),
            },
            {
                "id": "infra.delete",
                "prefix": (("drain", "replace", "cordon", "scale", "taint", "uncordon",
                            "patch"),),
                "reason": "{name} {0} changes or removes cluster resources",
                "match": ("kubectl drain node-1", "kubectl scale deploy web --replicas=0",
                          "oc -n x patch svc web -p '{}'"),
                "not_match": ("kubectl describe node node-1",
                              "kubectl scale deploy web --replicas=0 --dry-run=client"),
            },
            {
                "id": "infra.delete",
                "prefix": ("rollout", "undo"),
                "reason": "{name} rollout undo changes or removes cluster resources",
                "match": ("kubectl rollout undo deploy/web",),
                "not_match": ("kubectl rollout status deploy/web",),
            },
            {
                "id": "remote.exec",
                "prefix": (("exec", "debug", "run", "attach", "cp"),),
                "then": "dashdash",
                "reason": "{name} {0} runs commands in a container",
                "match": ("kubectl exec -it web -- sh", "kubectl -n dev run tmp --image=busybox",
                          "oc cp web:/tmp/x ./x"),
                "not_match": ("kubectl logs web", "kubectl get pods -o name"),
            },
        ),
        "read_only": ("get", "describe", "logs", "version", "explain", "top", "api-resources",
                      "cluster-info", "auth", "config", "events", "diff"),
    },
    {
        "names": ("helm",),
        "values": _K8S,
        "inert": _DRY,
        "inert_unless": _NOT_DRY,
        "writes": ("--output-dir",),
        "rules": (
            {
                "id": "infra.delete",
                "prefix": (("uninstall", "delete", "del", "un"),),
                "reason": "helm {0} removes a release and what it runs",
                "match": ("helm uninstall web", "helm -n prod un web"),
                "not_match": ("helm uninstall web --dry-run", "helm status web"),
            },
            {
                "id": "infra.delete",
                "prefix": ("rollback",),
                "reason": "helm rollback replaces a running release",
                "match": ("helm rollback web 3",),
                "not_match": ("helm history web",),
            },
            {
                "id": "publish.release",
                "prefix": ("push",),
                "reason": "helm push publishes a chart",
                "match": ("helm push chart.tgz oci://registry",),
                "not_match": ("helm pull oci://registry/chart", "helm package chart/"),
            },
        ),
        "read_only": ("list", "ls", "status", "get", "history", "show", "search", "version",
                      "template", "lint", "env"),
    },
    {
        "names": ("terraform", "tofu"),
        "values": ("-chdir",),
        "writes": ("-out", "-state-out"),
        "chdir": "-chdir",
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("destroy",),
                "reason": "{name} destroy tears down infrastructure",
                "match": ("terraform destroy", "tofu -chdir=infra destroy -auto-approve"),
                "not_match": ("terraform plan -destroy", "terraform state list"),
            },
            {
                "id": "data.destroy",
                "prefix": ("apply",),
                "with": ("-destroy",),
                "reason": "{name} destroy tears down infrastructure",
                "match": ("terraform apply -destroy -auto-approve",),
                "not_match": ("terraform apply -auto-approve", "terraform plan -destroy"),
            },
            {
                "id": "infra.delete",
                "prefix": ("state", ("rm", "push", "replace-provider")),
                "reason": "{name} state {1} changes what it manages",
                "match": ("terraform state rm aws_instance.web", "tofu state push x.tfstate"),
                "not_match": ("terraform state list", "terraform state show aws_instance.web"),
            },
            {
                "id": "infra.delete",
                "prefix": ("workspace", "delete"),
                "reason": "{name} workspace delete removes a workspace and its state",
                "match": ("terraform workspace delete staging",),
                "not_match": ("terraform workspace select staging",),
            },
            {
                "id": "infra.delete",
                "prefix": ("force-unlock",),
                "reason": "{name} force-unlock breaks another run's lock on the state",
                "match": ("terraform force-unlock 1234",),
                "not_match": ("terraform plan -lock=false",),
            },
        ),
        "read_only": ("plan", "show", "validate", "fmt", "version", "output", "providers",
                      "graph"),
    },
    {
        "names": ("pulumi",),
        "values": ("-C", "--cwd", "-s", "--stack", "--color", "--logflow", "--verbose", "-v",
                   "--config-file"),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("destroy",),
                "without": ("--preview-only",),
                "reason": "pulumi destroy tears down a stack's resources",
                "match": ("pulumi destroy --yes", "pulumi -C infra destroy -s prod"),
                "not_match": ("pulumi destroy --preview-only", "pulumi preview"),
            },
            {
                "id": "data.destroy",
                "prefix": ("stack", "rm"),
                "reason": "pulumi stack rm deletes a stack",
                "match": ("pulumi stack rm prod",),
                "not_match": ("pulumi stack ls",),
            },
            {
                "id": "infra.delete",
                "prefix": ("state", "delete"),
                "reason": "pulumi state delete drops a resource from the stack",
                "match": ("pulumi state delete urn:pulumi:prod::x",),
                "not_match": ("pulumi state unprotect urn:pulumi:prod::x",),
            },
        ),
        "read_only": ("preview", "stack", "config", "whoami", "version", "about"),
    },
    {
        "names": ("cdk",),
        "values": ("-a", "--app", "--profile", "-c", "--context", "--output", "-o"),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("destroy",),
                "reason": "cdk destroy tears down stacks",
                "match": ("cdk destroy --force", "cdk --profile prod destroy Web"),
                "not_match": ("cdk diff", "cdk synth"),
            },
        ),
    },
    {
        "names": ("serverless", "sls"),
        "values": ("--stage", "-s", "--region", "-r", "--config", "-c", "--aws-profile"),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("remove",),
                "reason": "{name} remove tears down a service",
                "match": ("serverless remove --stage prod", "sls -s prod remove"),
                "not_match": ("serverless deploy --stage dev", "sls info"),
            },
        ),
    },
    {
        "names": ("vagrant", "minikube"),
        "values": ("-p", "--profile"),
        "rules": (
            {
                "id": "infra.delete",
                "prefix": (("destroy", "delete"),),
                "reason": "{name} {0} deletes a machine",
                "match": ("vagrant destroy -f", "minikube delete --all"),
                "not_match": ("vagrant halt", "minikube status"),
            },
        ),
    },
    {
        "names": ("kind",),
        "values": ("--name", "--kubeconfig"),
        "rules": (
            {
                "id": "infra.delete",
                "prefix": ("delete",),
                "reason": "kind delete removes a cluster",
                "match": ("kind delete cluster --name dev",),
                "not_match": ("kind get clusters",),
            },
        ),
    },
    {
        "names": ("docker", "podman", "nerdctl"),
        "values": {
            "docker": ("-H", "--host", "-c", "--context", "--config", "-l", "--log-level",
                       "--tlscacert", "--tlscert", "--tlskey"),
            "podman": ("--url", "--connection", "-c", "--root", "--runroot", "--storage-driver",
                       "--log-level", "--remote", "--identity"),
            "nerdctl": ("-n", "--namespace", "-H", "--host", "--address", "-a", "--snapshotter"),
        },
        "rules": (
            {
                "id": "infra.delete",
                "prefix": ("compose", ("down", "rm")),
                "with": ("-v", "--volumes"),
                "reason": "{name} compose {1} -v deletes the volumes' data",
                "match": ("docker compose down -v", "podman compose rm --volumes web"),
                "not_match": ("docker compose down", "docker compose rm web"),
            },
            {
                "id": "remote.exec",
                "prefix": ("compose", ("run", "exec")),
                "reason": "{name} compose {1} runs commands in a container",
                "match": ("docker compose exec web sh", "docker compose run --rm web pytest"),
                "not_match": ("docker compose logs -f web", "docker compose up -d"),
            },
            {
                "id": "infra.delete",
                "prefix": ("!compose", "prune"),
                "without": ("--filter*",),
                "reason": "{name} {0} prune deletes unused data",
                "match": ("docker system prune -af", "docker -H tcp://h:2375 image prune"),
                "not_match": ("docker system prune --filter until=24h", "docker system df"),
            },
            {
                "id": "infra.delete",
                "prefix": (("rm", "rmi"),),
                "reason": "{name} {0} removes containers or data",
                "match": ("docker rm -f web", "podman rmi app:old"),
                "not_match": ("docker ps -a", "docker compose rm web"),
            },
            {
                "id": "infra.delete",
                "prefix": ("!compose", "rm"),
                "reason": "{name} {0} rm removes containers or data",
                "match": ("docker --context prod volume rm data", "docker container rm web"),
                "not_match": ("docker volume ls", "docker compose rm web"),
            },
            {
                "id": "publish.release",
                "prefix": ("push",),
                "reason": "{name} push publishes an image others pull",
                "match": ("docker push me/app:latest",),
                "not_match": ("docker pull me/app:latest", "docker compose push"),
            },
            {
                "id": "publish.release",
                "prefix": ("image", "push"),
                "reason": "{name} image push publishes an image others pull",
                "match": ("podman image push me/app:latest",),
                "not_match": ("docker image ls",),
            },
            {
                "id": "remote.exec",
                "prefix": (("run", "exec"),),
                "reason": "{name} {0} runs commands in a container",
                "match": ("docker run --rm -it python:3.12 python -V", "docker exec -it web bash"),
                "not_match": ("docker logs web --tail 50", "docker build -t app ."),
            },
            {
                "id": "remote.exec",
                "prefix": ("container", ("run", "exec")),
                "reason": "{name} container {1} runs commands in a container",
                "match": ("docker container run alpine sh", "nerdctl container exec web sh"),
                "not_match": ("docker container ls", "docker container inspect web"),
            },
        ),
        "read_only": ("ps", "images", "logs", "inspect", "version", "info", "stats", "top",
                      "history", "search",
                      ("compose", ("ps", "logs", "config", "ls", "images", "version"))),
    },
    {
        "names": ("docker-compose",),
        "values": ("-f", "--file", "-p", "--project-name", "--profile", "--env-file",
                   "--project-directory", "-H", "--host", "--context"),
        "rules": (
            {
                "id": "infra.delete",
                "prefix": (("down", "rm"),),
                "with": ("-v", "--volumes"),
                "reason": "docker-compose {0} -v deletes the volumes' data",
                "match": ("docker-compose down -v", "docker-compose -f ci.yml rm --volumes"),
                "not_match": ("docker-compose down", "docker-compose up -d"),
            },
            {
                "id": "remote.exec",
                "prefix": (("run", "exec"),),
                "reason": "docker-compose {0} runs commands in a container",
                "match": ("docker-compose exec web sh", "docker-compose -p x run web"),
                "not_match": ("docker-compose ps", "docker-compose logs web"),
            },
        ),
        "read_only": ("ps", "logs", "config", "ls", "images", "version"),
    },
    {
        "names": ("gh", "glab"),
        "values": {"gh": ("-R", "--repo", "--hostname"), "glab": ("-R", "--repo")},
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("repo", "delete"),
                "reason": "{name} repo delete deletes a repository",
                "match": ("gh repo delete me/app --yes", "glab repo delete g/app"),
                "not_match": ("gh repo view me/app", "gh repo clone me/app"),
            },
            {
                "id": "infra.delete",
                "prefix": ("repo", "archive"),
                "reason": "{name} repo archive archives a repository",
                "match": ("gh repo archive me/app",),
                "not_match": ("gh repo list",),
            },
            {
                "id": "infra.delete",
                "prefix": ("repo", "rename"),
                "reason": "{name} repo rename renames a repository others use",
                "match": ("gh repo rename app2",),
                "not_match": ("gh repo view",),
            },
            {
                "id": "publish.release",
                "prefix": ("repo", "edit"),
                "reason": "{name} repo edit changes a repository's settings",
                "match": ("gh repo edit --visibility public",),
                "not_match": ("gh repo view --web",),
            },
            {
                "id": "infra.delete",
                "prefix": ("release", "delete"),
                "reason": "{name} release delete deletes a release",
                "match": ("gh release delete v1.0",),
                "not_match": ("gh release view v1.0",),
            },
            {
                "id": "infra.delete",
                "prefix": ("release", "delete-asset"),
                "reason": "{name} release delete-asset deletes a release asset",
                "match": ("gh release delete-asset v1.0 app.tgz",),
                "not_match": ("gh release download v1.0",),
            },
            {
                "id": "publish.release",
                "prefix": ("release", "create"),
                "reason": "{name} release create publishes a release",
                "match": ("gh release create v1.0 --notes x",),
                "not_match": ("gh release list",),
            },
            {
                "id": "publish.release",
                "prefix": ("release", "upload"),
                "reason": "{name} release upload publishes release assets",
                "match": ("gh release upload v1.0 app.tgz",),
                "not_match": ("gh release download v1.0 -p app.tgz",),
            },
            {
                "id": "infra.delete",
                "prefix": ("gist", "delete"),
                "reason": "{name} gist delete deletes a gist",
                "match": ("gh gist delete 1234",),
                "not_match": ("gh gist list",),
            },
            {
                "id": "infra.delete",
                "prefix": ("secret", "delete"),
                "reason": "{name} secret delete deletes a secret",
                "match": ("gh secret delete TOKEN",),
                "not_match": ("gh secret list",),
            },
            {
                "id": "infra.delete",
                "prefix": ("secret", "set"),
                "reason": "{name} secret set replaces a secret",
                "match": ("gh secret set TOKEN --body x",),
                "not_match": ("gh secret list --env prod",),
            },
            {
                "id": "infra.delete",
                "prefix": ("variable", "delete"),
                "reason": "{name} variable delete deletes a variable",
                "match": ("gh variable delete REGION",),
                "not_match": ("gh variable list",),
            },
            {
                "id": "infra.delete",
                "prefix": ("ssh-key", "delete"),
                "reason": "{name} ssh-key delete deletes an SSH key",
                "match": ("gh ssh-key delete 42",),
                "not_match": ("gh ssh-key list",),
            },
            {
                "id": "infra.delete",
                "prefix": ("gpg-key", "delete"),
                "reason": "{name} gpg-key delete deletes a GPG key",
                "match": ("gh gpg-key delete ABCD",),
                "not_match": ("gh gpg-key list",),
            },
            {
                "id": "infra.delete",
                "prefix": ("run", "cancel"),
                "reason": "{name} run cancel cancels a workflow run",
                "match": ("gh run cancel 99",),
                "not_match": ("gh run view 99",),
            },
            {
                "id": "infra.delete",
                "prefix": ("cache", "delete"),
                "reason": "{name} cache delete deletes caches",
                "match": ("gh cache delete --all",),
                "not_match": ("gh cache list",),
            },
            {
                "id": "exfil.read-credentials",
                "prefix": ("auth", "token"),
                "reason": "{name} auth token prints the stored token",
                "match": ("gh auth token",),
                "not_match": ("gh auth status",),
            },
            {
                "id": "infra.delete",
                "prefix": ("project", "delete"),
                "reason": "{name} project delete deletes a project",
                "match": ("gh project delete 3 --owner me",),
                "not_match": ("gh project list",),
            },
            {
                "id": "infra.delete",
                "prefix": ("label", "delete"),
                "reason": "{name} label delete deletes a label",
                "match": ("gh label delete bug --yes",),
                "not_match": ("gh label list",),
            },
        ),
        "rest": "_infra.gh_rest",
        "read_only": (("pr", ("view", "list", "diff", "checks")), ("issue", ("view", "list")),
                      ("repo", "view"), ("run", ("list", "view")), "status"),
    },
    {
        "names": ("aws",),
        "values": ("--region", "--profile", "--output", "--endpoint-url", "--query", "--color",
                   "--ca-bundle", "--cli-read-timeout", "--cli-connect-timeout",
                   "--cli-binary-format"),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("s3", "rb"),
                "reason": "aws s3 rb deletes bucket contents",
                "match": ("aws s3 rb s3://bucket --force",),
                "not_match": ("aws s3 ls s3://bucket", "aws s3 mb s3://bucket"),
            },
            {
                "id": "data.destroy",
                "prefix": ("s3", "rm"),
                "with": ("--recursive",),
                "reason": "aws s3 rm deletes bucket contents",
                "match": ("aws s3 rm s3://bucket/logs --recursive",),
                "not_match": ("aws s3 rm s3://bucket/logs/a.txt", "aws s3 ls --recursive"),
            },
            {
                "id": "infra.delete",
                "prefix": ("s3", "rm"),
                "reason": "aws s3 rm deletes an object",
                "match": ("aws --profile prod s3 rm s3://bucket/a.txt",),
                "not_match": ("aws s3 cp a.txt s3://bucket/a.txt", "aws s3 ls s3://bucket"),
            },
            {
                "id": "data.destroy",
                "prefix": ("!s3", _AWS_TEARDOWN),
                "reason": "aws {0} {1} destroys data others depend on",
                "match": ("aws rds delete-db-instance --db-instance-identifier prod",
                          "aws --region eu-west-1 cloudformation delete-stack --stack-name web"),
                "not_match": ("aws rds describe-db-instances",
                              "aws ec2 delete-security-group --group-id sg-1"),
            },
            {
                "id": "infra.delete",
                "prefix": ("!s3", ("delete*", "terminate*", "remove*", "purge*", "deregister*",
                                   "disable*")),
                "reason": "aws {0} {1} deletes cloud resources",
                "match": ("aws ec2 delete-security-group --group-id sg-1",
                          "aws sqs purge-queue --queue-url u"),
                "not_match": ("aws ec2 describe-instances", "aws sqs send-message --queue-url u"),
            },
            {
                "id": "exfil.read-credentials",
                "prefix": ("secretsmanager", "get-secret-value"),
                "reason": "aws secretsmanager get-secret-value prints a secret",
                "match": ("aws secretsmanager get-secret-value --secret-id prod/db",),
                "not_match": ("aws secretsmanager list-secrets",),
            },
            {
                "id": "exfil.read-credentials",
                "prefix": ("ssm", ("get-parameter", "get-parameters")),
                "with": ("--with-decryption",),
                "reason": "aws ssm {1} prints a secret",
                "match": ("aws ssm get-parameter --name /prod/db --with-decryption",),
                "not_match": ("aws ssm get-parameter --name /prod/region",),
            },
        ),
        "rest": "_infra.aws_rest",
        "read_only": (("s3", "ls"), ("!secretsmanager", ("describe*", "list*", "get*"))),
    },
    {
        "names": ("gsutil",),
        "values": ("-o", "-h", "-u", "-p"),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("rb",),
                "reason": "gsutil rb deletes bucket contents",
                "match": ("gsutil rb gs://bucket",),
                "not_match": ("gsutil mb gs://bucket", "gsutil ls gs://bucket"),
            },
            {
                "id": "data.destroy",
                "prefix": ("rm",),
                "with": ("-r", "-R", "-a", "-rf"),
                "reason": "gsutil rm deletes bucket contents",
                "match": ("gsutil rm -r gs://bucket/logs", "gsutil -m rm -a gs://bucket/x"),
                "not_match": ("gsutil rm gs://bucket/a.txt", "gsutil ls -r gs://bucket"),
            },
            {
                "id": "infra.delete",
                "prefix": ("rm",),
                "reason": "gsutil rm deletes objects",
                "match": ("gsutil rm gs://bucket/a.txt",),
                "not_match": ("gsutil cat gs://bucket/a.txt",),
            },
        ),
        "rest": "_infra.gsutil_rest",
        "read_only": ("ls", "cat", "du", "stat"),
    },
    {
        "names": ("gcloud",),
        "values": ("--project", "--account", "--configuration", "--format", "--verbosity",
                   "--impersonate-service-account", "--billing-project", "--flags-file",
                   "--flatten", "--trace-token", "--zone", "--region"),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("projects", "delete"),
                "also": ((("sql", "spanner"), "instances", "delete"),
                         ("storage", "buckets", "delete"), ("container", "clusters", "delete")),
                "reason": "gcloud {0} {1} {2} destroys data",
                "match": ("gcloud projects delete my-proj", "gcloud sql instances delete db",
                          "gcloud --project p container clusters delete web"),
                "not_match": ("gcloud compute instances delete vm-1",
                              "gcloud sql instances list"),
            },
            {
                "id": "infra.delete",
                "prefix": (),
                "anywhere": ("delete",),
                "reason": "gcloud {0} {1} {2} deletes cloud resources",
                "match": ("gcloud compute instances delete vm-1",
                          "gcloud alpha compute disks delete d --zone z"),
                "not_match": ("gcloud compute instances list", "gcloud projects delete p"),
            },
            {
                "id": "data.destroy",
                "prefix": ("storage", "rm"),
                "with": ("-r", "--recursive"),
                "reason": "gcloud storage rm -r deletes bucket contents",
                "match": ("gcloud storage rm -r gs://bucket/logs",),
                "not_match": ("gcloud storage rm gs://bucket/a.txt", "gcloud storage ls -r"),
            },
            {
                "id": "infra.delete",
                "prefix": ("storage", "rm"),
                "reason": "gcloud storage rm deletes objects",
                "match": ("gcloud storage rm gs://bucket/a.txt",),
                "not_match": ("gcloud storage ls gs://bucket",),
            },
            {
                "id": "exfil.read-credentials",
                "prefix": ("secrets", "versions", "access"),
                "also": (("auth", "print-access-token"),),
                "reason": "gcloud {0} {1} {2} prints a secret",
                "match": ("gcloud secrets versions access latest --secret db",
                          "gcloud auth print-access-token"),
                "not_match": ("gcloud secrets versions list --secret db", "gcloud auth list"),
            },
        ),
        "rest": "_infra.gcloud_rest",
        "read_only": ((("list", "describe"),), ("*", ("list", "describe")),
                      ("*", "*", ("list", "describe")), ("*", "*", "*", ("list", "describe"))),
    },
    {
        "names": ("az",),
        "values": ("--subscription", "--output", "-o", "--query", "--only-show-errors", "-g",
                   "--resource-group"),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": ("group", "delete"),
                "reason": "az group delete deletes every resource of the group",
                "match": ("az group delete -n prod --yes",),
                "not_match": ("az group list", "az vm delete -n vm1"),
            },
            {
                "id": "infra.delete",
                "prefix": (),
                "anywhere": ("delete", "delete-batch", "purge"),
                "reason": "az {0} {1} {2} deletes cloud resources",
                "match": ("az vm delete -n vm1 --yes", "az storage blob delete-batch -s c",
                          "az keyvault purge -n kv"),
                "not_match": ("az vm list", "az group delete -n prod"),
            },
            {
                "id": "exfil.read-credentials",
                "prefix": ("keyvault", "secret", "show"),
                "reason": "az keyvault secret show prints a secret",
                "match": ("az keyvault secret show --vault-name kv -n db",),
                "not_match": ("az keyvault secret list --vault-name kv",),
            },
        ),
        "rest": "_infra.az_rest",
        "read_only": ((("list", "show"),), ("*", ("list", "show")), ("*", "*", ("list", "show")),
                      ("*", "*", "*", ("list", "show"))),
    },
    {
        "names": ("doctl", "heroku", "fly", "flyctl", "vercel", "netlify", "firebase"),
        "values": {
            "doctl": ("-t", "--access-token", "--context", "-o", "--output", "--config", "-c"),
            "heroku": ("-a", "--app", "-r", "--remote"),
            "fly": ("-a", "--app", "-c", "--config", "-t", "--access-token"),
            "flyctl": ("-a", "--app", "-c", "--config", "-t", "--access-token"),
            "vercel": ("--scope", "--token", "-t", "--cwd", "-A", "--local-config", "-Q",
                       "--global-config"),
            "netlify": ("--auth", "--site", "--filter"),
            "firebase": ("--project", "-P", "--token", "--config"),
        },
        "rules": (
            {
                "id": "data.destroy",
                "prefix": (_PLATFORM_TEARDOWN,),
                "also": (("*", _PLATFORM_TEARDOWN), ("apps", "destroy*"),
                         ("postgres", "destroy*")),
                "reason": "{name} {0} {1} {2} deletes what others depend on",
                "match": ("heroku apps:destroy -a web --confirm web", "fly apps destroy web",
                          "heroku pg:reset DATABASE_URL", "netlify sites:delete"),
                "not_match": ("heroku apps:info -a web", "vercel ls", "fly apps list"),
            },
            {
                "id": "data.destroy",
                "prefix": ("firestore:delete",),
                "with": ("--all-collections", "-r", "--recursive"),
                "programs": ("firebase",),
                "reason": "firebase firestore:delete deletes collections",
                "match": ("firebase firestore:delete --all-collections",
                          "firebase --project p firestore:delete -r users"),
                "not_match": ("firebase firestore:delete users/alice",
                              "firebase firestore:indexes"),
            },
            {
                "id": "infra.delete",
                "prefix": (_PLATFORM_DELETES,),
                "also": (("*", _PLATFORM_DELETES), ("*", "*", _PLATFORM_DELETES)),
                "reason": "{name} {0} {1} {2} deletes cloud resources",
                "match": ("vercel rm my-app --yes", "doctl apps delete 42",
                          "doctl compute droplet delete web",
                          "firebase firestore:delete users/alice", "heroku addons:destroy redis"),
                "not_match": ("vercel deploy --prod", "heroku apps:destroy -a web",
                              "doctl compute droplet list"),
            },
        ),
    },
    {
        "names": ("shutdown", "reboot", "halt", "poweroff"),
        "safe_with": ("--help",),
        "rules": (
            {
                "id": "sys.destroy",
                "prefix": (),
                "reason": "{name} stops the machine",
                "match": ("shutdown -h now", "reboot", "poweroff -f"),
                "not_match": ("shutdown --help", "reboot --help"),
            },
        ),
    },
    {
        "names": ("init", "telinit"),
        "safe_with": ("--help",),
        "rules": (
            {
                "id": "sys.destroy",
                "prefix": (),
                "with": ("0", "6", "1", "s"),
                "reason": "{name} stops the machine",
                "match": ("init 0", "telinit 6", "init s"),
                "not_match": ("init 3", "telinit q", "init --help"),
            },
        ),
    },
    {
        "names": ("systemctl",),
        "rules": (
            {
                "id": "sys.destroy",
                "prefix": (_SYSTEMCTL_STOPS,),
                "reason": "systemctl {0} stops system services",
                "match": ("systemctl stop nginx", "systemctl --user disable app",
                          "systemctl poweroff"),
                "not_match": ("systemctl status nginx", "systemctl restart nginx"),
            },
            {
                "id": "sys.persistence",
                "prefix": (_SYSTEMCTL_INSTALLS,),
                "reason": "systemctl {0} makes a service start by itself",
                "match": ("systemctl --user enable agent.service", "systemctl edit nginx"),
                "not_match": ("systemctl is-enabled nginx", "systemctl start nginx"),
            },
        ),
        "read_only": _SYSTEMCTL_READS,
    },
    {
        "names": ("service",),
        "rules": (
            {
                "id": "sys.destroy",
                "prefix": ("*", ("stop", "restart")),
                "reason": "service {0} {1} stops a system service",
                "match": ("service nginx stop", "service ssh restart"),
                "not_match": ("service nginx status", "service --status-all"),
            },
        ),
        "read_only": _SYSTEMCTL_READS,
    },
    {
        "names": ("launchctl",),
        "rules": (
            {
                "id": "sys.persistence",
                "prefix": (("load", "bootstrap", "submit", "enable", "kickstart"),),
                "reason": "launchctl {0} installs a job that runs by itself",
                "match": ("launchctl load ~/Library/LaunchAgents/x.plist",
                          "launchctl bootstrap gui/501 x.plist"),
                "not_match": ("launchctl list", "launchctl print gui/501"),
            },
            {
                "id": "sys.destroy",
                "prefix": (("unload", "bootout", "remove", "disable", "reboot"),),
                "reason": "launchctl {0} stops system jobs",
                "match": ("launchctl bootout gui/501", "launchctl unload -w x.plist"),
                "not_match": ("launchctl list com.apple.x", "launchctl load x.plist"),
            },
        ),
        "read_only": ("list", "print"),
    },
    {
        "names": ("loginctl",),
        "rules": (
            {
                "id": "sys.persistence",
                "prefix": ("enable-linger",),
                "reason": "loginctl enable-linger keeps the user's services running",
                "match": ("loginctl enable-linger tester",),
                "not_match": ("loginctl disable-linger tester", "loginctl list-sessions"),
            },
            {
                "id": "sys.destroy",
                "prefix": (("terminate-user", "kill-user", "terminate-session", "kill-session",
                            "poweroff", "reboot"),),
                "reason": "loginctl {0} ends sessions",
                "match": ("loginctl terminate-user tester", "loginctl kill-session 3"),
                "not_match": ("loginctl show-user tester", "loginctl enable-linger tester"),
            },
        ),
    },
    {
        "names": ("dropdb", "dropuser", "pg_dropcluster"),
        "longs": ("--echo", "--interactive", "--if-exists", "--force", "--host", "--port",
                  "--username", "--no-password", "--password", "--maintenance-db", "--help",
                  "--version", "--stop"),
        "safe_with": ("--help", "--version", "-V", "-?"),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": (),
                "reason": "{name} deletes a database or its users",
                "match": ("dropdb prod", "dropuser -h db app", "pg_dropcluster 15 main"),
                "not_match": ("dropdb --help", "dropuser --vers", "dropdb -V"),
            },
        ),
    },
    {
        "names": ("redis-cli",),
        "values": ("-h", "-p", "-s", "-a", "-u", "-n", "-r", "-i", "-d", "--user", "--pass",
                   "--tls", "--cacert", "--cert", "--key", "--sni"),
        "stdin_words": True,
        "rules": (
            {
                "id": "data.destroy",
                "prefix": (),
                "anywhere": ("flushall", "flushdb"),
                "reason": "redis-cli FLUSHALL deletes every key",
                "match": ("redis-cli FLUSHALL", "redis-cli -h cache -n 2 flushdb async"),
                "not_match": ("redis-cli GET flushall:count", "redis-cli DBSIZE"),
            },
            {
                "id": "exec.code-option",
                "prefix": ("config", "set"),
                "also": (("module", "load"), ("script", "load"),
                         (("eval", "evalsha", "debug"),)),
                "reason": "redis-cli {0} {1} changes what the server runs",
                "match": ("redis-cli CONFIG SET dir /tmp", "redis-cli -p 6380 eval 'return 1' 0",
                          "redis-cli MODULE LOAD /tmp/x.so"),
                "not_match": ("redis-cli CONFIG GET dir", "redis-cli SCRIPT EXISTS abc"),
            },
        ),
        "read_only": ("get", "keys", "info", "ping", "scan", "ttl"),
    },
    {
        "names": ("mysqladmin",),
        "rules": (
            {
                "id": "data.destroy",
                "prefix": (),
                "with": ("drop",),
                "reason": "mysqladmin drop deletes a database",
                "match": ("mysqladmin -u root drop shop", "mysqladmin DROP shop"),
                "not_match": ("mysqladmin status", "mysqladmin create shop"),
            },
            {
                "id": "sys.destroy",
                "prefix": (),
                "with": ("shutdown",),
                "reason": "mysqladmin shutdown stops the server",
                "match": ("mysqladmin -u root shutdown",),
                "not_match": ("mysqladmin ping", "mysqladmin processlist"),
            },
        ),
    },
)
