//go:build unix && !linux && !darwin

package platform

// maxrssUnit is ru_maxrss's unit on the BSDs: kilobytes (getrusage(2)).
const maxrssUnit = 1024
