//go:build !unix && !windows

package platform

import "errors"

func readOwnUsage() (OwnUsage, error) { return OwnUsage{}, errors.ErrUnsupported }
