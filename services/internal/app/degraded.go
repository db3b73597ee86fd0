package app

import "errors"

// degraded marks a health error of a service that is impaired but recovers
// by itself (its broker is away and it reconnects, it rebuilds a lost
// session): /healthz reports it without asking for a restart, which would
// not help and would cost a recovery of its own.
type degraded struct{ err error }

func (d *degraded) Error() string { return d.err.Error() }
func (d *degraded) Unwrap() error { return d.err }

// Degraded marks err, returned by HealthChecker.Healthy, as a degradation
// the service rides out by itself.
func Degraded(err error) error {
	if err == nil {
		return nil
	}
	return &degraded{err: err}
}

// IsDegraded reports whether err is a degradation (see Degraded) rather
// than a failure.
func IsDegraded(err error) bool {
	var d *degraded
	return errors.As(err, &d)
}
