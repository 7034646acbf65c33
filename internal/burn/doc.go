// Package burn draws how an issue's token budget was spent: a Mermaid line
// chart of consumed and remaining tokens over the accepted steps of one
// issue, a chart of consumed tokens over time across a repository's issues,
// and a Markdown table of the tokens each agent spent.
//
// Every piece of text that comes from an issue or an agent (titles, agent
// names) is reduced to inert characters before it is written into a chart,
// so it cannot close the code fence, start a Mermaid directive or comment, or
// reach the HTML the renderer produces. The package is pure: it reads no
// files and makes no requests.
package burn
