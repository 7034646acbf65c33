// Command gns-guard guards GNS-2 agent workflows kept in Gitea issues.
// One binary serves every role; `gns-guard -h` lists the verbs.
//
//   - check, prune, tokens, schema, rules: read an issue body from a file
//     and judge, prune or count it, or print the schema and the rules.
//   - history, context, report, recover: one issue on the server; an
//     agent's entry load, its report of spend and its recovery.
//   - status, init, doctor: a repository's dashboard, its setup, and
//     whether its guarantees hold.
//   - keygen, pubkey, version: the ledger's keys and the build.
//   - mcp: the verbs as tools of a Model Context Protocol server on stdio.
//   - meter: the model-API proxy that counts every call against the
//     issue's budget.
//   - action: the Gitea Actions step on issue, comment and label events;
//     the default when GITHUB_ACTIONS=true.
package main
