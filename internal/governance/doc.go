// Package governance holds integration tests of context governance on a
// real Gitea server, run through the gns-guard binary on the events the
// server delivers: the context-pressure gate as comments arrive and as the
// checkpoint is pruned (its token figures checked against `gns-guard
// tokens`), located comment-protocol findings, the completion digest, and
// the context-budget metrics record.
//
// "The last 3 comments" are the last three of the issue, whoever wrote
// them, as SPEC section 6 says: the guard's own sticky status comment is
// one of them when it is recent, with the text it had when the run read
// it, and so are archive and digest comments. An agent entering the issue
// loads them too, so they belong in its entry load.
//
// Two measurements of one run are reported. The outputs, the metrics
// record, the log and the step summary give the load the run judged: the
// comments as it read them. The sticky status comment gives the load of the
// issue as the run left it, its own text included, which is what the next
// agent meets and the next run judges; on a run that posts or rewrites the
// status comment the two differ. When the issue as left would be judged
// differently (the status comment pushed a long comment out of the last
// three), the status comment reports the run's own findings and figures.
//
// The tests need GNS_GUARD_INTEGRATION=1 (or CI); see internal/giteatest.
package governance
