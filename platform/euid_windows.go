package platform

import "golang.org/x/sys/windows"

func euid() uint32 {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return NoUID
	}
	return sidRID(u.User.Sid)
}
