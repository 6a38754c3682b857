//go:build !race

package gather

const raceEnabled = false
