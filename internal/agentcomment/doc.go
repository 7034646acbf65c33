// Package agentcomment reads the result comments GNS-2 agents post: the
// header `## 🔄 {agent} | phase:{phase} | depth:{depth}` and the
// machine-readable footer `<!-- GNS_EVENT {json} -->` that history is
// recovered from, and renders the completion digest.
//
// It is pure text in, data out.
package agentcomment
