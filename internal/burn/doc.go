// Package burn draws how an issue's budget was spent: a Mermaid chart of
// one issue's steps, one of a repository's issues over time, and a table by
// agent. Text from an issue or agent is reduced to inert characters first,
// so it cannot escape the chart. It is pure.
package burn
