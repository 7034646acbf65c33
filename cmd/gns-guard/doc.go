// Command gns-guard guards GNS-2 agent workflows kept in Gitea issues.
// Its verbs, as `gns-guard -h` lists them:
//
//   - on a body: check, prune, tokens; schema and rules print.
//   - on an issue: history, context, report, recover.
//   - on a repository: status, init, doctor.
//   - keygen, pubkey, version.
//   - mcp, the verbs as tools; meter, the metering model-API proxy.
//   - action, the Actions step, default when GITHUB_ACTIONS=true.
package main
