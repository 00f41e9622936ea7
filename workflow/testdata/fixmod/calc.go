// Package calc is the workflow tests' fixture: Add has a bug its test finds.
package calc

// Add returns a plus b.
func Add(a, b int) int { return a - b }
