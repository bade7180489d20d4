"""Calls all five operations through suds clients built from the live WSDL, over the SOAP 1.1 port.

Usage: client.py BASE_URL LABEL PHONE [extended]
Prints one JSON line: {"soap11": {...values seen...}}. The TS test (test/clients/suds.test.ts) holds
the expected values. suds lists the Soap12 port too but always speaks SOAP 1.1, so only the Soap
port is used. With "extended" (a service run with SIS_RESULTS=extended), it reads the marks and push
settings instead.
"""
import json
import sys

from suds.client import Client

FIELDS = ('id_student', 'fullName', 'id_device', 'ShowActive')
MARK_FIELDS = ('id_student', 'SubjectID', 'SubjectName', 'Mark', 'Term', 'MarkDate', 'Note')
SCHOOL = 'http://school-a.example'
SPECIAL_ID = 'k&<é>"\''


def text(value):
    # suds returns its own Text subclass of str: plain str for json.
    return None if value is None else str(value)


def students(result):
    if result is None:
        return None
    items = getattr(result, 'StudentInfo', [])
    return [None if s is None else {f: text(getattr(s, f, None)) for f in FIELDS} for s in items]


def marks(result):
    # A field left out of the answer (null) is absent here, as in the expected values.
    if result is None:
        return None
    items = getattr(result, 'Mark', [])
    return [None if m is None else {f: text(getattr(m, f)) for f in MARK_FIELDS if getattr(m, f, None) is not None} for m in items]


def main():
    base, label, phone = sys.argv[1:4]

    def port(service):
        # No WSDL cache: each run's server has a new port, and a cache would only leave files behind.
        return Client(f'{base}/{service}.asmx?WSDL', cache=None).service[service + 'Soap']

    if sys.argv[4:5] == ['extended']:
        marks_port = port('GetStudnetsMarks')
        push = port('PushNotificationMobile').GetServerKeyAndSender()
        report = {
            'math': marks(marks_port.GetStudentsMarks(StudnetID='1', SubjectID='math')),
            'all': marks(marks_port.GetStudentsMarks(StudnetID='1', SubjectID='')),
            'serverKey': None if push is None else {'ServerKey': text(push.ServerKey), 'SenderId': text(push.SenderId)},
        }
        print(json.dumps({'soap11': report}, ensure_ascii=True))
        return

    notes = port('NotificationNotes')
    push = port('PushNotificationMobile')
    report = {
        # The WSDL types show_active as s1:char, an unsignedShort: the UTF-16 code, not the character.
        'active': students(notes.GetStudentSchool(school_base_url=SCHOOL, show_active=ord('1'))),
        'inactive': students(notes.GetStudentSchool(school_base_url=SCHOOL, show_active=ord('0'))),
        'known': text(push.GetTokenDevice(id='1')),
        'unknown': text(push.GetTokenDevice(id='no-such-device')),
        'special': text(push.GetTokenDevice(id='esc')),
        'specialId': text(push.GetTokenDevice(id=SPECIAL_ID)),
        'authCode': port('AuthCodeSending').AuthCode(code=f'{label}-soap11', phone=phone),
        'marks': port('GetStudnetsMarks').GetStudentsMarks(StudnetID='1', SubjectID='math'),
        'serverKey': push.GetServerKeyAndSender(),
    }
    print(json.dumps({'soap11': report}, ensure_ascii=True))


if __name__ == '__main__':
    main()
