// Package discover finds the process groups published under a state root
// in the wrapper's layout and judges what each is doing: sandtop's own
// runtime root, read through a control.Plane, and the roots of agents
// (DeepSeek Harness's <cwd>/.dsh-e2b), read with one scanning command that
// also takes the process table. Whoever wrote a state directory, one rule
// (Judge) decides its PublishedGroup.
package discover
