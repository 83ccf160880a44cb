//go:build !unix

package dirlock

import (
	"errors"
	"os"
)

func tryLock(*os.File) (bool, error) {
	return false, errors.New("directory locks need flock(2), which this platform lacks")
}

func unlock(*os.File) error { return nil }
