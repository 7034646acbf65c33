// Package live is the one reader of a live issue, for the action and every
// verb: the issue, its last comments, the status comment and its ledger,
// the guard's login and the configuration file. One loop answers the
// decision's questions, so `report`, `context`, `recover` and `history`
// judge as the guard would. It decides nothing.
package live
