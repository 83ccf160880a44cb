package broker

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-dev/tributary/broker/acl"
)

// DescribeUserScramCredentials (50, v0; DESCRIBE on the cluster) and
// AlterUserScramCredentials (51, v0; ALTER on the cluster), with Kafka's
// checks and messages (ScramImage.describe, ScramControlManager). The
// client salts the password; the broker stores the salt, the iterations
// and the keys derived from the salted password, never the password.

var scramMechanismByType = map[int8]string{1: MechanismSCRAMSHA256, 2: MechanismSCRAMSHA512}

func scramTypeOf(mech string) int8 {
	for t, m := range scramMechanismByType {
		if m == mech {
			return t
		}
	}
	return 0
}

func handleDescribeUserSCRAMCredentials(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !c.allowedCluster(acl.OpDescribe) {
		// As Kafka: the error, and again for each user asked for.
		msg := clusterAuthFailedMsg
		resp.ErrorCode, resp.ErrorMessage = errClusterAuthorizationFailed, &msg
		for _, u := range req.Users {
			r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			r.User, r.ErrorCode, r.ErrorMessage = u.Name, errClusterAuthorizationFailed, &msg
			resp.Results = append(resp.Results, r)
		}
		return &reply{resp: resp}
	}
	s := c.b.sec
	s.mu.RLock()
	defer s.mu.RUnlock()
	dup := map[string]bool{}
	var users []string
	if len(req.Users) == 0 {
		for u := range s.data.SCRAM {
			users = append(users, u)
		}
		sort.Strings(users)
	} else {
		for _, u := range req.Users {
			if _, seen := dup[u.Name]; seen {
				dup[u.Name] = true
				continue
			}
			dup[u.Name] = false
			users = append(users, u.Name)
		}
	}
	for _, u := range users {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = u
		switch creds := s.data.SCRAM[u]; {
		case dup[u]:
			msg := "Cannot describe SCRAM credentials for the same user twice in a single request: " + u
			r.ErrorCode, r.ErrorMessage = kerr.DuplicateResource.Code, &msg
		case len(creds) == 0:
			msg := "Attempt to describe a user credential that does not exist: " + u
			r.ErrorCode, r.ErrorMessage = kerr.ResourceNotFound.Code, &msg
		default:
			for _, mech := range []string{MechanismSCRAMSHA256, MechanismSCRAMSHA512} {
				if cr := creds[mech]; cr != nil {
					ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
					ci.Mechanism, ci.Iterations = scramTypeOf(mech), int32(cr.Iterations)
					r.CredentialInfos = append(r.CredentialInfos, ci)
				}
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return &reply{resp: resp}
}

func handleAlterUserSCRAMCredentials(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	result := func(user string, code int16, msg string) {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode = user, code
		if msg != "" {
			r.ErrorMessage = &msg
		}
		resp.Results = append(resp.Results, r)
	}
	if !c.allowedCluster(acl.OpAlter) {
		seen := map[string]bool{}
		for _, d := range req.Deletions {
			if !seen[d.Name] {
				seen[d.Name] = true
				result(d.Name, errClusterAuthorizationFailed, "")
			}
		}
		for _, u := range req.Upsertions {
			if !seen[u.Name] {
				seen[u.Name] = true
				result(u.Name, errClusterAuthorizationFailed, "")
			}
		}
		return &reply{resp: resp}
	}
	s := c.b.sec
	s.mu.Lock()
	defer s.mu.Unlock()
	const twice = "A user credential cannot be altered twice in the same request"
	errs := map[string]struct {
		code int16
		msg  string
	}{}
	var errOrder []string
	setErr := func(user string, code int16, msg string) {
		if _, ok := errs[user]; !ok {
			errOrder = append(errOrder, user)
		}
		errs[user] = struct {
			code int16
			msg  string
		}{code, msg}
	}
	validName := func(name string, mech int8) bool {
		if name == "" {
			setErr(name, kerr.UnacceptableCredential.Code, "Username must not be empty")
			return false
		}
		if scramMechanismByType[mech] == "" {
			setErr(name, kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism")
			return false
		}
		return true
	}
	dels := map[string]kmsg.AlterUserSCRAMCredentialsRequestDeletion{}
	var delOrder []string
	for _, d := range req.Deletions {
		if _, bad := errs[d.Name]; bad {
			continue
		}
		if _, ok := dels[d.Name]; ok {
			delete(dels, d.Name)
			setErr(d.Name, kerr.DuplicateResource.Code, twice)
			continue
		}
		if !validName(d.Name, d.Mechanism) {
			continue
		}
		if s.data.SCRAM[d.Name][scramMechanismByType[d.Mechanism]] == nil {
			setErr(d.Name, kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist")
			continue
		}
		dels[d.Name] = d
		delOrder = append(delOrder, d.Name)
	}
	ups := map[string]*scramCredential{}
	upMech := map[string]string{}
	var upOrder []string
	for _, u := range req.Upsertions {
		if _, bad := errs[u.Name]; bad {
			continue
		}
		_, isDel := dels[u.Name]
		if _, isUp := ups[u.Name]; isDel || isUp {
			delete(dels, u.Name)
			delete(ups, u.Name)
			setErr(u.Name, kerr.DuplicateResource.Code, twice)
			continue
		}
		if !validName(u.Name, u.Mechanism) {
			continue
		}
		switch {
		case u.Iterations < scramMinIterations:
			setErr(u.Name, kerr.UnacceptableCredential.Code, "Too few iterations")
			continue
		case u.Iterations > scramMaxIterations:
			setErr(u.Name, kerr.UnacceptableCredential.Code, "Too many iterations")
			continue
		}
		mech := scramMechanismByType[u.Mechanism]
		cred, err := newSCRAMCredential(mech, u.Salt, int(u.Iterations), u.SaltedPassword)
		if err != nil {
			setErr(u.Name, kerr.UnacceptableCredential.Code, err.Error())
			continue
		}
		ups[u.Name], upMech[u.Name] = cred, mech
		upOrder = append(upOrder, u.Name)
	}
	old := cloneSCRAM(s.data.SCRAM)
	for _, name := range delOrder {
		if d, ok := dels[name]; ok {
			delete(s.data.SCRAM[name], scramMechanismByType[d.Mechanism])
			if len(s.data.SCRAM[name]) == 0 {
				delete(s.data.SCRAM, name)
			}
		}
	}
	for _, name := range upOrder {
		if cred, ok := ups[name]; ok {
			if s.data.SCRAM[name] == nil {
				s.data.SCRAM[name] = map[string]*scramCredential{}
			}
			s.data.SCRAM[name][upMech[name]] = cred
		}
	}
	if len(dels)+len(ups) > 0 {
		if err := s.saveLocked(); err != nil {
			s.data.SCRAM = old
			c.logger.Error("storing SCRAM credentials failed", "err", err)
			for name := range dels {
				setErr(name, errUnknownServerError, err.Error())
			}
			for name := range ups {
				setErr(name, errUnknownServerError, err.Error())
			}
			dels, ups = nil, nil
		}
	}
	for _, name := range delOrder {
		if _, ok := dels[name]; ok {
			result(name, 0, "")
		}
	}
	for _, name := range upOrder {
		if _, ok := ups[name]; ok {
			result(name, 0, "")
			c.logger.Info("stored SCRAM credential", "user", name, "mechanism", upMech[name], "by", c.principal)
		}
	}
	for _, name := range errOrder {
		e := errs[name]
		result(name, e.code, e.msg)
	}
	return &reply{resp: resp}
}

func cloneSCRAM(m map[string]map[string]*scramCredential) map[string]map[string]*scramCredential {
	out := make(map[string]map[string]*scramCredential, len(m))
	for u, byMech := range m {
		out[u] = make(map[string]*scramCredential, len(byMech))
		for k, v := range byMech {
			out[u][k] = v
		}
	}
	return out
}
