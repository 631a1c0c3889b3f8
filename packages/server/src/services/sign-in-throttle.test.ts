import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientNetwork } from './sign-in-throttle.ts';

test('failed sign-ins are counted per IPv4 address and per IPv6 /64, however the address is written', () => {
  for (const [address, counted] of [
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:7:1::1', '2001:db8:7:1::/64'],
    ['2001:DB8:0007:0001:aaaa:bbbb:cccc:dddd', '2001:db8:7:1::/64'],
    ['a::b:c:d:e:f:1', 'a:0:b:c::/64'],
    ['1:2:3::', '1:2:3:0::/64'],
    ['1::192.0.2.7', '1:0:0:0::/64'],
    ['1:2:3:4:5:6:192.0.2.7', '1:2:3:4::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ]) {
    assert.equal(clientNetwork(address!), counted, address);
  }
});
