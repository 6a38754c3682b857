//go:build !windows

package platform

func underWine() bool { return false }
