# kdc.sh: the throw-away MIT KDC of the shell scripts (bench/scripts/krb5.sh,
# e2e/kernel/e2e-krb5.sh), as kdc.go is the Go tests'. Source it.

# krb5_conf REALM KDC: a krb5.conf for REALM with its KDC at KDC
# (host:port; TCP only, as guestfwd carries no UDP), on stdout.
krb5_conf() {
	cat <<CONF
[libdefaults]
	default_realm = $1
	dns_lookup_realm = false
	dns_lookup_kdc = false
	rdns = false
	dns_canonicalize_hostname = false
	udp_preference_limit = 1
	permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
	$1 = {
		kdc = $2
	}
CONF
}

# kdc_create DIR REALM PORT: the realm's database in DIR, a KDC profile
# listening on 127.0.0.1:PORT, DIR/krb5.conf naming it; exports
# KRB5_CONFIG and KRB5_KDC_PROFILE for kadmin.local and krb5kdc. Returns
# kdb5_util's status (its output in DIR/create.log).
kdc_create() {
	local dir=$1 realm=$2 port=$3
	krb5_conf "$realm" "127.0.0.1:$port" >"$dir/krb5.conf"
	cat >"$dir/kdc.conf" <<CONF
[kdcdefaults]
	kdc_listen = 127.0.0.1:$port
	kdc_tcp_listen = 127.0.0.1:$port
[realms]
	$realm = {
		database_name = $dir/principal
		key_stash_file = $dir/stash
		acl_file = $dir/kadm5.acl
		supported_enctypes = aes256-cts-hmac-sha1-96:normal
		max_life = 2h
	}
[logging]
	kdc = FILE:$dir/kdc.log
CONF
	: >"$dir/kadm5.acl"
	export KRB5_CONFIG=$dir/krb5.conf KRB5_KDC_PROFILE=$dir/kdc.conf
	kdb5_util create -s -W -P masterpw -r "$realm" >"$dir/create.log" 2>&1
}
